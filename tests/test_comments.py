"""`comments.comments` finds what Python's tokenizer finds: every comment, none inside a string."""
import io
import tokenize

import pytest

from compilelint.comments import comments

TRICKY = {
    "in strings": 's = "# noqa"\nt = \'# noqa\'  # real\n',
    "escaped quotes": 's = "a \\" # not" # yes\nt = \'b \\\' # not\' # yes\n',
    "raw strings": "r = r'\\' # not' # yes\nq = r\"\\\\\" # yes\n",
    "triple quotes": 'd = """\n# not\n\'\'\' # not\n""" # yes\ne = \'\'\'x "# not" \'\'\'\n',
    "quotes in comments": "x = 1  # don't \"stop\" here\ny = 'a'  # it's\n",
    "empty strings": "a = '' # one\nb = \"\"\"\"\"\" # two\nc = '''''' # three\n",
    "continued string": "s = 'a\\\n# not'  # yes\n",
    "prefixes": "b = rb'#' + Rb\"#\" + f'{x}#' + u'#' # yes\n",
    "f-string": "f = f\"{a!r:>{w}} # not\" # yes\n",
    "crlf": "a = 1  # one\r\nb = '#'\r\n# two\r\n",
    "no comments": "x = 'a' \"b\"\n",
    "triple quote ends early": 's = """a""" + "#" # yes\nt = """\\"""# not"""\n',
}


def _tokenizer(text):
    return [(t.start[0], t.string) for t in tokenize.generate_tokens(io.StringIO(text).readline)
            if t.type == tokenize.COMMENT]


@pytest.mark.parametrize("name", sorted(TRICKY))
def test_the_comments_are_the_tokenizers(name):
    text = TRICKY[name]
    compile(text, name, "exec")  # each case is Python
    assert list(comments(text)) == _tokenizer(text)


def test_rows_count_the_lines_of_multiline_strings():
    text = 'a = """\n\n# not\n"""\n# five\n'
    assert list(comments(text)) == [(5, "# five")]
