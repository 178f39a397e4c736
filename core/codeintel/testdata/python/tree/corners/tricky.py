# A def in a comment is not a definition: def fake(): pass
"""A docstring mentioning
def not_a_function():
    class NotAClass: pass
"""
import typing
from typing import (
    Any,
    Callable,  # trailing comment
)

s1 = 'def inside_single(): pass'
s2 = "class InsideDouble: pass"
s3 = r'\' def raw_escape(): pass'
s4 = b"\x00 class InBytes: pass"
s5 = f"{'def in_fstring(): pass'} {s1!r:>{len(s2)}} {{def braces}}"
s6 = rb'''
class InRawTripleBytes:
    pass
'''
s7 = f"""
{s1}
def not_in_triple_fstring(): pass
"""
total = 1 + \
    2


@property
@typing.no_type_check
def decorated(a: int = {1: 2}[1], b=lambda x: x) -> Callable[[int], int]:
    return lambda y: y


class Outer(object):
    """Doc."""

    attr: int = 3

    class Inner:
        def method(self):
            def nested_function():
                class DeepClass: pass
                return DeepClass
            return nested_function

    async def coroutine(self):
        async with self as a:
            return a

    if typing.TYPE_CHECKING:
        def conditional_method(self): ...
    else:
        def conditional_method(self):
            x = (
                1,
                2,
            )
            return x

    @staticmethod
    def static(): pass

    def line_continued(self, a,
                       b):
        return a \
            + b

    def trailing_comment(self):
        return 1
        # this comment is not part of the span

    def last_string(self):
        return """
        multi
        line"""


class E(Exception): pass
class F: x = 1; y = 2


async def top_coroutine():
    await something()  # noqa


def	tabbed():
	if True:
		return 1


def ﬁnal_nfkc(): pass


def after_semicolons(): a = 1; b = 2


def unicode_ident_ünïcode():
    return "déf fake(): pass"


lambda_holder = {"k": lambda: 0}


def last():
    pass
# the end
