#!/usr/bin/env python3
"""Writes tests/fixtures/gpt2-bytes-padded: gpt2-bytes with its vocabulary padded, as exports of
GPT-2 pad its 50,257 tokens to 50,304 (a multiple of 64).

config.json says vocab_size 320 while vocab.json keeps its 257 tokens: ids 257..319 have no
token. Their rows of wte (the tied LM head's too) are 4x the rows of ids 0..62, so that their
logits are 4x those ids' and a padding id is the most probable one wherever a logit is positive:
an engine that does not leave them out of the distribution picks them. The rows of ids 0..256 are
gpt2-bytes' own, so every real id's logit is gpt2-bytes' exactly.

Deterministic, byte-identical on each run; the standard library only:
    python3 scripts/make_padded_vocab_fixture.py
"""
import json
import pathlib
import shutil
import struct

ROOT = pathlib.Path(__file__).resolve().parent.parent
SOURCE = ROOT / "tests/fixtures/gpt2-bytes"
TARGET = ROOT / "tests/fixtures/gpt2-bytes-padded"
PADDED = 320


def read_safetensors(path):
    data = path.read_bytes()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + n])
    body = data[8 + n :]
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        tensors[name] = (info["dtype"], info["shape"], body[begin:end])
    return tensors


def write_safetensors(path, tensors):
    header, body = {}, b""
    for name in sorted(tensors):
        dtype, shape, raw = tensors[name]
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(body), len(body) + len(raw)]}
        body += raw
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    path.write_bytes(struct.pack("<Q", len(text)) + text + body)


def main():
    tensors = read_safetensors(SOURCE / "model.safetensors")
    dtype, (vocab, width), raw = tensors["wte.weight"]
    assert dtype == "F32"
    rows = [struct.unpack_from(f"<{width}f", raw, 4 * width * i) for i in range(vocab)]
    for j in range(vocab, PADDED):
        rows.append(tuple(4.0 * v for v in rows[j - vocab]))
    tensors["wte.weight"] = ("F32", [PADDED, width], b"".join(struct.pack(f"<{width}f", *r) for r in rows))

    if TARGET.exists():
        shutil.rmtree(TARGET)
    TARGET.mkdir()
    config = json.loads((SOURCE / "config.json").read_text())
    config["vocab_size"] = PADDED
    (TARGET / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    write_safetensors(TARGET / "model.safetensors", tensors)
    for name in ("vocab.json", "merges.txt"):
        shutil.copyfile(SOURCE / name, TARGET / name)


if __name__ == "__main__":
    main()
