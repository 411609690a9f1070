#!/usr/bin/python3
"""English-Spanish sentence pairs through Apertium, and their split.

    nmt_pairs.py wrap SENTENCES > apertium_in.html
    apertium -f html-noent eng-spa apertium_in.html apertium_out.html
    nmt_pairs.py unwrap SENTENCES apertium_out.html > pairs.tsv
    nmt_pairs.py split pairs.tsv OUT_DIR [--held-out 0.044]

`wrap` puts sentence i in `<p id="sI">...</p>`. Apertium passes tags through untouched, so
`unwrap` finds every translation by its id whatever Apertium did to the lines, and fails naming
the id when one is missing, repeated or out of order. Apertium's marks are removed and the
word kept: `*word` (unknown word, copied from the source), `@word` (no bilingual entry),
`#word` (generation error); source sentences never contain these characters.

`split` sends a pair by the SHA-256 of its English side: the first `--held-out` fraction of
the hash range to test.tsv, the next to valid.tsv, the rest to train.tsv (each
`source<TAB>target`, UTF-8, in input order). The English sentences are distinct, so the splits
are disjoint, and a sentence keeps its split when other sentences come or go.
"""
import argparse
import hashlib
import html
import os
import re
import sys

PARAGRAPH = re.compile(r'<p id="s(\d+)">(.*?)</p>', re.S)
MARK = re.compile(r"(?<![\w*@#])[*@#](?=\w)")


def fail(message):
    sys.exit(f"nmt_pairs.py: {message}")


def read_lines(path):
    with open(path, encoding="utf-8") as f:
        return f.read().splitlines()


def wrap(args):
    for i, sentence in enumerate(read_lines(args.sentences)):
        print(f'<p id="s{i}">{html.escape(sentence, quote=False)}</p>')


def translations(path, count):
    """The `count` translations in Apertium's output `path`, by paragraph id."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    found = [(int(i), body) for i, body in PARAGRAPH.findall(text)]
    for expected, (i, _) in enumerate(found):
        if i != expected:
            line = text.count("\n", 0, text.find(f'<p id="s{i}">')) + 1
            fail(f"{path}:{line}: paragraph s{i} where s{expected} was expected")
    if len(found) != count:
        fail(f"{path}: {len(found)} translated paragraphs for {count} sentences")
    return [body for _, body in found]


def clean(translation):
    """One line of plain text: entities decoded, Apertium's marks removed, spaces collapsed."""
    text = html.unescape(MARK.sub("", translation))
    return " ".join(text.split())


def unwrap(args):
    sentences = read_lines(args.sentences)
    marked = dropped = 0
    for i, (source, target) in enumerate(zip(sentences, translations(args.apertium_out,
                                                                     len(sentences)))):
        marked += bool(MARK.search(target))
        target = clean(target)
        if not target:
            dropped += 1
            print(f"nmt_pairs.py: {args.sentences}:{i + 1}: empty translation, dropped",
                  file=sys.stderr)
            continue
        print(f"{source}\t{target}")
    print(f"nmt_pairs.py: {len(sentences) - dropped} pairs, {marked} with Apertium marks "
          f"removed, {dropped} dropped", file=sys.stderr)


def bucket(source):
    """A fixed number in [0, 1) from the sentence's SHA-256."""
    digest = hashlib.sha256(source.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") / 2.0**64


def split(args):
    os.makedirs(args.out_dir, exist_ok=True)
    names = ("test", "valid", "train")
    files = {n: open(os.path.join(args.out_dir, f"{n}.tsv"), "w", encoding="utf-8")
             for n in names}
    counts = dict.fromkeys(names, 0)
    for number, line in enumerate(read_lines(args.pairs), 1):
        if line.count("\t") != 1:
            fail(f"{args.pairs}:{number}: expected 'source<TAB>target'")
        h = bucket(line.split("\t")[0])
        name = "test" if h < args.held_out else "valid" if h < 2 * args.held_out else "train"
        files[name].write(line + "\n")
        counts[name] += 1
    for f in files.values():
        f.close()
    print("nmt_pairs.py: " + ", ".join(f"{n} {counts[n]}" for n in reversed(names)),
          file=sys.stderr)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("wrap", help="sentences -> Apertium HTML input")
    p.add_argument("sentences")
    p.set_defaults(run=wrap)
    p = sub.add_parser("unwrap", help="Apertium HTML output -> source<TAB>target")
    p.add_argument("sentences")
    p.add_argument("apertium_out")
    p.set_defaults(run=unwrap)
    p = sub.add_parser("split", help="pairs -> train/valid/test TSVs")
    p.add_argument("pairs")
    p.add_argument("out_dir")
    p.add_argument("--held-out", type=float, default=0.044,
                   help="fraction of pairs in test, and again in valid (default 0.044)")
    p.set_defaults(run=split)
    args = parser.parse_args()
    args.run(args)


if __name__ == "__main__":
    main()
