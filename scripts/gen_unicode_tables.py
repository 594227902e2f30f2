"""Generate core/tokenizer/unicode_tables.inc: the code-point ranges behind the GPT-2 pre-tokenizer's
character classes, as tiktoken's regex crate defines them:

  \\p{L}  General_Category Lu, Ll, Lt, Lm, Lo   (UnicodeData.txt)
  \\p{N}  General_Category Nd, Nl, No           (UnicodeData.txt)
  \\s     White_Space                           (PropList.txt)
  \\p{P}  General_Category Pc Pd Ps Pe Pi Pf Po  (UnicodeData.txt)
  \\w     Alphabetic | M | Nd | Pc | Join_Control (DerivedCoreProperties.txt, UnicodeData.txt,
         PropList.txt): the regex crate's Unicode \\w (UTS #18 Annex C), which the tokenizers
         library's Whitespace pre-tokenizer uses; stored as what it adds to \\p{L} (see
         word_extra_ranges)

Input is the Unicode Character Database as Debian's unicode-data package installs it
(apt-get install unicode-data). Plain Python 3, no third-party modules. Run from anywhere:

    python3 scripts/gen_unicode_tables.py [--ucd /usr/share/unicode] [--out core/tokenizer/unicode_tables.inc]

The output is deterministic; never edit it by hand, re-run this script.
"""

import argparse
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
LETTER = {"Lu", "Ll", "Lt", "Lm", "Lo"}
NUMBER = {"Nd", "Nl", "No"}
PUNCTUATION = {"Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po"}
WORD_CATEGORIES = {"Mn", "Mc", "Me", "Nd", "Pc"}
# A packed word range is first << WORD_LENGTH_BITS | (length - 1).
WORD_LENGTH_BITS = 8


def read_unicode_data(path):
    """Yields (first, last, general_category). Large blocks (CJK, Hangul, Tangut, private use...)
    are written as a "<Name, First>" line followed by a "<Name, Last>" line: one range."""
    first = None
    with open(path, encoding="utf-8") as f:
        for line in f:
            fields = line.split(";")
            if len(fields) < 3:
                continue
            cp, name, gc = int(fields[0], 16), fields[1], fields[2]
            if name.endswith(", First>"):
                first = cp
            elif name.endswith(", Last>"):
                if first is None:
                    sys.exit(f"{path}: {name} without its First line")
                yield first, cp, gc
                first = None
            else:
                yield cp, cp, gc


def read_property(path, prop):
    """Yields (first, last) for each line "XXXX..YYYY ; prop # comment" of a PropList-style file."""
    with open(path, encoding="utf-8") as f:
        for line in f:
            data = line.split("#", 1)[0].strip()
            if not data:
                continue
            cps, name = (s.strip() for s in data.split(";"))
            if name == prop:
                a, _, b = cps.partition("..")
                yield int(a, 16), int(b or a, 16)


def unicode_version(proplist_path):
    # The first line of every UCD property file names its version: "# PropList-15.0.0.txt".
    with open(proplist_path, encoding="utf-8") as f:
        m = re.match(r"# PropList-(\d+\.\d+\.\d+)\.txt", f.readline())
    if not m:
        sys.exit(f"{proplist_path}: no version in the first line")
    return m.group(1)


def merge(ranges):
    """Sorted, with overlapping and adjacent ranges joined."""
    out = []
    for a, b in sorted(ranges):
        if out and a <= out[-1][1] + 1:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return out


def word_extra_ranges(word, letters):
    """\\w is a superset of \\p{L} (Alphabetic includes every letter), so unicode.cpp tests
    is_letter first and this table holds only the rest. Two ranges are joined where only letters lie
    between them (a letter in the table changes no answer), which roughly halves the count."""
    out = []
    for a, b in merge((cp, cp) for cp in word - letters):
        if out and all(cp in letters for cp in range(out[-1][1] + 1, a)):
            out[-1][1] = b
        else:
            out.append([a, b])
    return out


def emit_packed(name, ranges, what):
    """One uint32 a range, first << WORD_LENGTH_BITS | (length - 1): half the bytes of a pair of
    char32_t (the table goes into the WebAssembly engine)."""
    for a, b in ranges:
        if b - a >= 1 << WORD_LENGTH_BITS or a >= 1 << (32 - WORD_LENGTH_BITS):
            sys.exit(f"{name}: range {a:04X}..{b:04X} does not fit the packed form")
    per_line = 6
    rows = []
    for i in range(0, len(ranges), per_line):
        rows.append("    " + " ".join(f"0x{a << WORD_LENGTH_BITS | (b - a):08X}," for a, b in ranges[i : i + per_line]))
    return (
        f"// {what}: {len(ranges)} ranges, each first << {WORD_LENGTH_BITS} | (length - 1).\n"
        f"constexpr int kWordLengthBits = {WORD_LENGTH_BITS};\n"
        f"constexpr std::uint32_t {name}[] = {{\n" + "\n".join(rows) + "\n};\n"
    )


def code_points(ranges):
    return {cp for a, b in ranges for cp in range(a, b + 1)}


def emit(name, ranges, what):
    per_line = 4
    rows = []
    for i in range(0, len(ranges), per_line):
        rows.append("    " + " ".join(f"{{0x{a:04X}, 0x{b:04X}}}," for a, b in ranges[i : i + per_line]))
    return (
        f"// {what}: {len(ranges)} ranges.\n" f"constexpr CodepointRange {name}[] = {{\n" + "\n".join(rows) + "\n};\n"
    )


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--ucd",
        default="/usr/share/unicode",
        help="directory with UnicodeData.txt, PropList.txt, DerivedCoreProperties.txt",
    )
    p.add_argument("--out", default=os.path.join(ROOT, "core", "tokenizer", "unicode_tables.inc"))
    args = p.parse_args()

    unicode_data = os.path.join(args.ucd, "UnicodeData.txt")
    proplist = os.path.join(args.ucd, "PropList.txt")
    derived = os.path.join(args.ucd, "DerivedCoreProperties.txt")
    for path in (unicode_data, proplist, derived):
        if not os.path.exists(path):
            sys.exit(f"{path} not found: install Debian's unicode-data package (apt-get install unicode-data)")
    version = unicode_version(proplist)

    letters, numbers, punctuation, word = [], [], [], []
    for a, b, gc in read_unicode_data(unicode_data):
        if gc in WORD_CATEGORIES:
            word.append((a, b))
        if gc in LETTER:
            letters.append((a, b))
        elif gc in NUMBER:
            numbers.append((a, b))
        elif gc in PUNCTUATION:
            punctuation.append((a, b))
    tables = [
        ("kLetterRanges", merge(letters), "\\p{L}, General_Category Lu Ll Lt Lm Lo"),
        ("kNumberRanges", merge(numbers), "\\p{N}, General_Category Nd Nl No"),
        ("kWhiteSpaceRanges", merge(read_property(proplist, "White_Space")), "\\s, White_Space"),
        ("kPunctuationRanges", merge(punctuation), "\\p{P}, General_Category Pc Pd Ps Pe Pi Pf Po"),
    ]
    word_set = code_points(word)
    word_set |= code_points(read_property(derived, "Alphabetic"))
    word_set |= code_points(read_property(proplist, "Join_Control"))
    word_extra = word_extra_ranges(word_set, code_points(letters))
    word_what = "\\w less \\p{L}, Alphabetic | M | Nd | Pc | Join_Control, joined over letters"

    text = (
        f"// Generated by scripts/gen_unicode_tables.py from Unicode {version}\n"
        f"// (UnicodeData.txt, PropList.txt, DerivedCoreProperties.txt). DO NOT EDIT: re-run the script instead.\n"
        f"// Sorted, disjoint, non-adjacent inclusive ranges {{first, last}}; included by unicode.cpp,\n"
        f"// which defines CodepointRange.\n\n"
        f'constexpr char kUnicodeVersion[] = "{version}";\n\n'
    )
    text += "\n".join(emit(*t) for t in tables)
    text += "\n" + emit_packed("kWordExtraRanges", word_extra, word_what)
    with open(args.out, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)
    sizes = ", ".join(f"{name} {len(r)}" for name, r, _ in tables) + f", kWordExtraRanges {len(word_extra)}"
    print(f"wrote {os.path.relpath(args.out)}: Unicode {version}; ranges: {sizes}")


if __name__ == "__main__":
    main()
