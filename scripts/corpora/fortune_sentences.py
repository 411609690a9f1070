#!/usr/bin/python3
"""Distinct English sentences of 4 to 25 words from the fortune files (Debian's fortunes and
fortunes-min packages), one per line, in the order first met (files sorted by name).

    fortune_sentences.py [--min-words 4] [--max-words 25] DIR > sentences.txt

Each fortune (text between '%' lines) loses its attribution (from the first line that starts
with white space and '--'), speaker tags ('Q:', 'A:'), emphasis (*word*, _word_) and
overstriking, is joined into one line
and split after '.', '!' or '?' (not after common abbreviations or initials). A sentence is kept
when it is printable ASCII without markup-like characters, starts with a capital letter or a
digit, ends with '.', '!' or '?', has balanced quotes and brackets, is not shouted, and has
`--min-words`..`--max-words` words; a longer sentence is cut at its semicolons first. Statistics go to standard error.
"""
import argparse
import collections
import os
import re
import sys

ATTRIBUTION = re.compile(r"^\s+--|^--\s")
OVERSTRIKE = re.compile(r".\x08")
SPEAKER = re.compile(r"(^|\s)(Q|A):\s+")
EMPHASIS = re.compile(r"(?<!\w)([*_])(\w[\w' ]*?)\1(?!\w)")  # *word* or _some words_
# A sentence ends after . ! ? (and closing quotes or brackets) before white space and a capital,
# a digit or an opening quote.
BOUNDARY = re.compile(r"(?<=[.!?])[\"')]*\s+(?=[\"'(]*[A-Z0-9])")
ABBREVIATIONS = {
    "mr.", "mrs.", "ms.", "dr.", "st.", "jr.", "sr.", "vs.", "prof.", "gen.", "col.", "capt.",
    "lt.", "sgt.", "rev.", "gov.", "sen.", "rep.", "no.", "vol.", "etc.", "e.g.", "i.e.",
    "inc.", "ltd.", "co.", "corp.", "mt.", "ft.", "wm.", "u.s.", "u.k.", "a.m.", "p.m.",
}
# Characters that mark code, markup, e-mail or ASCII art, and that Apertium uses as marks.
BANNED = set("*@#<>|_\\{}[]^~`=+\t")
SHAPE = re.compile(r"^[\"'(]*[A-Z0-9].*[.!?][\"')]*$")


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dir", help="folder of fortune files, e.g. /usr/share/games/fortunes")
    parser.add_argument("--min-words", type=int, default=4)
    parser.add_argument("--max-words", type=int, default=25)
    return parser.parse_args()


def fortune_files(folder):
    """The fortune text files of `folder`: not the .dat indexes, not the .u8 links to them."""
    names = sorted(os.listdir(folder))
    return [os.path.join(folder, n) for n in names
            if not n.endswith((".dat", ".u8")) and os.path.isfile(os.path.join(folder, n))]


def fortunes(path):
    """The fortunes of one file, as lists of lines."""
    with open(path, encoding="utf-8", errors="replace") as f:
        text = OVERSTRIKE.sub("", f.read())
    entry = []
    for line in text.split("\n"):
        if line.strip() == "%":
            yield entry
            entry = []
        else:
            entry.append(line)
    yield entry


def body_text(lines):
    """One line of text: the fortune without its attribution and speaker tags."""
    kept = []
    for line in lines:
        if ATTRIBUTION.match(line):
            break
        kept.append(line.strip())
    text = EMPHASIS.sub(r"\2", " ".join(kept))
    return SPEAKER.sub(r"\1", text).strip()


def split_sentences(text):
    """`text` cut at sentence ends, glued back where the cut follows an abbreviation or an
    initial ("J. R. R. Tolkien")."""
    pieces = []
    start = 0
    for match in BOUNDARY.finditer(text):
        last_word = text[start:match.start()].rsplit(" ", 1)[-1].lower()
        if last_word in ABBREVIATIONS or re.fullmatch(r"[a-z]\.", last_word):
            continue
        pieces.append(text[start:match.end()].strip())
        start = match.end()
    pieces.append(text[start:].strip())
    return [" ".join(p.split()) for p in pieces if p]


def unquoted(sentence):
    """`sentence` without the opening or closing quote of a quotation that spans sentences."""
    if sentence.count('"') % 2 == 1:
        if sentence.startswith('"'):
            return sentence[1:]
        if sentence.endswith('"'):
            return sentence[:-1]
    return sentence


def clauses(sentence, max_words):
    """A sentence longer than `max_words` cut at its semicolons into sentences of their own
    ("A; b." -> "A.", "B."); others as they are."""
    if len(sentence.split()) <= max_words or "; " not in sentence:
        return [sentence]
    parts = sentence.split("; ")
    return [p[:1].upper() + p[1:] + ("" if i == len(parts) - 1 else ".")
            for i, p in enumerate(parts)]


def balanced(sentence):
    return sentence.count('"') % 2 == 0 and sentence.count("(") == sentence.count(")")


def shouted(words):
    caps = [w for w in words if sum(c.isupper() for c in w) >= 3 and w.upper() == w]
    return len(caps) > 2 or len(caps) * 4 > len(words)


def rejection(sentence, min_words, max_words):
    """Why `sentence` is not kept, or None."""
    if not sentence.isascii() or not sentence.isprintable():
        return "not printable ASCII"
    if BANNED & set(sentence):
        return "markup characters"
    if not SHAPE.match(sentence):
        return "not a sentence shape"
    if not balanced(sentence):
        return "unbalanced quotes or brackets"
    words = sentence.split()
    if not min_words <= len(words) <= max_words:
        return "too short or too long"
    if shouted(words):
        return "shouted"
    return None


def candidates(entry, max_words):
    """The sentences of one fortune, before the checks."""
    for sentence in split_sentences(body_text(entry)):
        yield from clauses(unquoted(sentence), max_words)


def main():
    args = parse_args()
    files = fortune_files(args.dir)
    if not files:
        sys.exit(f"fortune_sentences.py: no fortune files in {args.dir} "
                 "(install the fortunes and fortunes-min packages)")
    seen = set()
    reasons = collections.Counter()
    for path in files:
        for entry in fortunes(path):
            for sentence in candidates(entry, args.max_words):
                why = rejection(sentence, args.min_words, args.max_words)
                if why is None and sentence in seen:
                    why = "duplicate"
                reasons[why or "kept"] += 1
                if why is None:
                    seen.add(sentence)
                    print(sentence)
    print(f"fortune_sentences.py: {len(files)} files; " +
          ", ".join(f"{k}: {v}" for k, v in reasons.most_common()), file=sys.stderr)


if __name__ == "__main__":
    main()
