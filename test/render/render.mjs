// Renders Markdown the way clients do and reports what is live in the HTML.
//
// Input (stdin): a JSON array of Markdown strings. Output (stdout): a JSON
// array, one entry per input, mapping each renderer's name to
// {violations: [...], text: "..."}: violations name every auto-loading
// element, event-handler attribute, unexpected element, and URL attribute
// that is not an absolute http(s) URL without user information; text is the
// visible text of the rendered HTML. The HTML is parsed with parse5, the
// HTML standard's parsing algorithm, not with patterns.
//
// The Go test suite starts this (test/security/render_test.go); run
// `npm ci` here first.
import MarkdownIt from 'markdown-it';
import { Marked } from 'marked';
import { unified } from 'unified';
import remarkParse from 'remark-parse';
import remarkGfm from 'remark-gfm';
import remarkRehype from 'remark-rehype';
import rehypeRaw from 'rehype-raw';
import rehypeStringify from 'rehype-stringify';
import { parseFragment } from 'parse5';

const markdownIt = new MarkdownIt({ html: true, linkify: true });
const marked = new Marked(); // GFM with autolinks, raw HTML passed through
const remarkSafe = unified().use(remarkParse).use(remarkGfm).use(remarkRehype).use(rehypeStringify);
const remarkRaw = unified().use(remarkParse).use(remarkGfm)
  .use(remarkRehype, { allowDangerousHtml: true }).use(rehypeRaw).use(rehypeStringify);

export const renderers = {
  'markdown-it': (md) => markdownIt.render(md),
  'marked': (md) => marked.parse(md, { async: false }),
  'remark-gfm': (md) => String(remarkSafe.processSync(md)),
  'remark-gfm-raw-html': (md) => String(remarkRaw.processSync(md)),
};

// Elements that load something with no click, or run or embed content.
const loading = new Set(['img', 'image', 'iframe', 'frame', 'frameset', 'script', 'object', 'embed',
  'applet', 'video', 'audio', 'source', 'track', 'link', 'style', 'meta', 'base', 'picture', 'portal',
  'svg', 'math', 'use', 'feimage', 'template', 'noscript', 'bgsound', 'xml']);

// Elements the renderers emit for plain Markdown: anything else is raw HTML
// that got through.
const markdownElements = new Set(['p', 'a', 'em', 'strong', 'code', 'pre', 'blockquote', 'ul', 'ol',
  'li', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'hr', 'br', 'table', 'thead', 'tbody', 'tr', 'th', 'td',
  'del', 's', 'input', 'sup', 'section', 'div', 'span']);

// Attributes whose value a browser fetches or navigates to.
const urlAttributes = new Set(['href', 'src', 'srcset', 'action', 'formaction', 'xlink:href', 'data',
  'poster', 'background', 'cite', 'longdesc', 'ping', 'manifest', 'codebase', 'archive', 'lowsrc',
  'dynsrc', 'icon', 'profile', 'usemap', 'content', 'imagesrcset', 'itemtype']);

// checkURL says what is wrong with a URL attribute's value, or ''. The
// URL standard's parser is the browsers' own: a value it cannot parse even
// against a base leads nowhere and is inert; one that parses only against a
// base is a relative reference, resolved against the client's own origin.
function checkURL(value) {
  let u;
  try {
    u = new URL(value);
  } catch {
    try {
      new URL(value, 'https://client.invalid/page');
    } catch {
      return '';
    }
    return 'relative reference';
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return `scheme ${u.protocol}`;
  if (u.username !== '' || u.password !== '') return 'user information';
  return '';
}

function inspect(html) {
  const violations = [];
  const text = [];
  const walk = (node) => {
    if (node.nodeName === '#text') {
      text.push(node.value);
      return;
    }
    if (node.tagName) {
      const tag = node.tagName.toLowerCase();
      if (loading.has(tag)) violations.push(`loading element <${tag}>`);
      else if (!markdownElements.has(tag)) violations.push(`unexpected element <${tag}>`);
      if (tag === 'input') {
        const type = (node.attrs.find((a) => a.name === 'type') || {}).value;
        if (type !== 'checkbox') violations.push(`input of type ${type}`);
      }
      for (const a of node.attrs) {
        const name = (a.prefix ? `${a.prefix}:` : '') + a.name.toLowerCase();
        if (name.startsWith('on')) violations.push(`event handler ${name} on <${tag}>`);
        if (name === 'style' && /url\s*\(|expression\s*\(|@import|\\/i.test(a.value)) violations.push(`style loads ${JSON.stringify(a.value)}`);
        if (urlAttributes.has(name) || name.endsWith(':href')) {
          const why = checkURL(a.value);
          if (why) violations.push(`${name}=${JSON.stringify(a.value)} on <${tag}>: ${why}`);
        }
      }
    }
    if (node.nodeName === '#comment') return;
    for (const c of node.childNodes || []) walk(c);
    if (node.content) walk(node.content); // <template>
  };
  walk(parseFragment(html));
  return { violations, text: text.join('') };
}

export function check(md) {
  const out = {};
  for (const [name, render] of Object.entries(renderers)) {
    let html;
    try {
      html = render(md);
    } catch (e) {
      out[name] = { violations: [`renderer failed: ${e.message}`], text: '' };
      continue;
    }
    out[name] = inspect(html);
  }
  return out;
}

const chunks = [];
for await (const c of process.stdin) chunks.push(c);
const docs = JSON.parse(Buffer.concat(chunks).toString('utf8'));
process.stdout.write(JSON.stringify(docs.map(check)));
