"""The logits of the model fixtures with int8 and int4 weights, by an independent emulation of the
quantized products in PyTorch: tests/fixtures/quantized/<fixture>.json, for tests/quantized_reference_test.cpp.

The forward passes are the fixtures' own float64 references, unchanged: make_fixtures.forward
(gpt2, openai-gpt) and decoder_reference.forward (llama, mistral, qwen2, qwen3, gpt_neox, gpt_neo).
What changes is the weights they are handed: every matrix is a `Quantized` object, so that each
product they compute (`x @ W` for a Conv1D weight stored (in, out), `x @ W.T` for an nn.Linear
weight or the tied head) runs the quantized product of core/kernels/quantized.h instead, while
indexing it (the token and position embeddings) gives the F32 rows. Biases, norms and the rest stay
float64 (the engine's float32 there is what the test's tolerance covers).

The contract, for y = x W^T + b with W (N,K), both quantized along K in blocks of 32 (K padded with
zeros), every step in float32 arithmetic (here: float64 rounded to float32 after each operation,
which is the correctly rounded float32 result):
  activations x (per row, per block): d = max|x| / 127; q = x * (1/d) (x / d where d is subnormal)
      clamped to [-127, 127], rounded half away from zero
  int8 weights: the same rule
  int4 weights (llama.cpp's Q4_0 with a float32 scale): m = the block's first value of largest
      magnitude, d = m / -8, q = min(15, max(0, trunc(w * (1/d) + 8.5))) - 8
  product: s = sum over blocks b, in order, of float32(exact integer dot of block b) * (dw_b * dx_b),
      then s + b (the bias added by the reference, in float64)

One thing float64 cannot settle: an activation that lies next to a rounding point (r = x / d within
NEAR_TIE of k + 1/2) may round the other way in the engine's float32, and that one step moves the
logits by up to ~0.1. The script names every such activation in the pass (`near_ties`: product,
row, k, in the order the products run) and also writes the logits for every other way of rounding
them (`alternatives`); the test takes the closest.

The weights are read from the fixture's files as the engine reads them (model.safetensors or the
sharded index; F32, F16 and BF16 to float32; other dtypes are buffers the engine ignores), the
config from config.json. Before writing, the script checks its reading: with plain weights the
forward pass gives expected.json's logits (within 1e-6); and that each deliberate mistake of
ALTERATIONS moves the quantized logits by more than MIN_MOVE, well above the test's tolerance.

Deterministic: re-running gives byte-identical files. Run from the repository root:

    /usr/bin/python3 scripts/quantized_reference.py [fixture ...]
"""

import json
import os
import struct
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import decoder_files  # noqa: E402
import decoder_reference  # noqa: E402
import make_fixtures  # noqa: E402
from check_model_pytorch import spec_of  # noqa: E402

FIXTURES_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures")
OUT_DIR = os.path.join(FIXTURES_DIR, "quantized")

# tests/test_util.cpp model_fixtures(): every model fixture the forward-pass tests run.
FIXTURES = [
    "gpt2-f32",
    "gpt2-f16",
    "gpt2-bf16",
    "gpt2-prefixed",
    "gpt2-single-head",
    "gpt2-full-context",
    "openai-gpt",
    "openai-gpt-relu-f16",
    "gpt2-bytes",
    "gpt2-attn-scaling",
    "gpt2-sinusoidal",
    "gpt2-cross-attention",
    "gpt2-classifier",
    "llama-gqa",
    "llama-mqa-bias-v5",
    "llama-llama3-bf16",
    "llama-llama3-v5",
    "llama-linear-sharded",
    "mistral-sliding",
    "qwen2-bf16",
    "qwen2-sliding-v5",
    "qwen3-qk-norm",
    "qwen3-sliding-bias-v5",
    "gpt-neox-parallel",
    "gpt-neox-sequential-f16-v5",
    "gpt-neo-local",
]

BLOCK = 32  # values per scale (kQ8Block)
MODES = ("int8", "int4")

# Deliberate mistakes an engine's quantized path could make; each must move the logits by more
# than MIN_MOVE (the test's tolerance is far below it).
ALTERATIONS = {
    "swapped_nibbles": "int4: a block's first 16 values read as its last 16 and back (nibble order)",
    "next_row_scale": "each row's block scales taken from the next row of its group of 4 (scale layout)",
    "weights_only": "activations not quantized (the products of F32 x and quantized weights)",
    "max_over_7": "int4: the symmetric rule d = max|w| / 7, q = round(w / d) in [-7, 7] instead of Q4_0's",
}
MIN_MOVE = 1e-2

# An activation whose r = x / d lies within this share of |r| of a rounding point (k + 1/2) may
# round either way in the engine (float32 arithmetic before the product: a few ulps from float64);
# the file holds the logits for each way of rounding the ones it finds, at most MAX_NEAR_TIES of
# them per forward pass (2^n runs).
NEAR_TIE = 1e-6
MAX_NEAR_TIES = 4


def f32(t):
    """Rounds float64 values to float32 (kept as float64): after one +, -, *, / of float32 values
    computed in float64, the correctly rounded float32 result."""
    return t.to(torch.float32).to(torch.float64)


# ---------------------------------------------------------------------------------------------
# Quantizers: (R, Kp) float32 values (as float64) -> (q (R, blocks, 32) int64, d (R, blocks) float)


def quantize_q8(v, ties=None):
    """ties: for activations, a NearTies that records (and may flip) the values next to a rounding
    point."""
    blocks = v.reshape(v.shape[0], -1, BLOCK)
    d = f32(blocks.abs().amax(-1) / 127)
    d_ = d[..., None]
    inv = torch.where((d_ > 0) & torch.isfinite(d_), f32(1 / d_), torch.zeros_like(d_))
    r = torch.where(torch.isinf(inv), f32(blocks / d_), f32(blocks * inv))  # a subnormal d divides
    r = r.clamp(-127, 127)
    q = torch.sign(r) * torch.floor(r.abs() + 0.5)  # half away from zero (exact in float64)
    if ties is not None:
        q = ties.resolve(r, q)
    return q.to(torch.int64), d


class NearTies:
    """The activations that lie within NEAR_TIE (relative) of a rounding point (k + 1/2) in one
    forward pass: the engine computes them in float32, the reference in float64, so either may
    round them the other way, and one such step changes the logits by up to ~0.1. Each one is
    named (product, row, k) in the order the products run; `flip` gives the ones to round the
    other way."""

    def __init__(self, flip=()):
        self.flip, self.found, self.product = set(flip), [], 0

    def resolve(self, r, q):
        near = ((r.abs() - torch.floor(r.abs()) - 0.5).abs() <= NEAR_TIE * r.abs()).nonzero().tolist()
        for row, block, i in near:
            name = (self.product, row, block * BLOCK + i)
            self.found.append(name)
            if name in self.flip:  # the other neighbour of r
                low = torch.floor(r[row, block, i].abs())
                other = low if q[row, block, i].abs() > low else low + 1
                q[row, block, i] = torch.sign(r[row, block, i]) * other
        self.product += 1
        return q


def quantize_q4(v, alter=()):
    blocks = v.reshape(v.shape[0], -1, BLOCK)
    if "max_over_7" in alter:
        d = f32(blocks.abs().amax(-1) / 7)
        d_ = d[..., None]
        r = torch.where(d_ > 0, f32(blocks / d_), torch.zeros_like(blocks))
        return (torch.sign(r) * torch.floor(r.abs() + 0.5)).to(torch.int64), d
    amax = torch.zeros(blocks.shape[:-1], dtype=torch.float64)
    m = torch.zeros_like(amax)
    for i in range(BLOCK):  # the first value of largest magnitude
        w = blocks[..., i]
        larger = w.abs() > amax
        amax = torch.where(larger, w.abs(), amax)
        m = torch.where(larger, w, m)
    d = f32(m / -8) + 0.0  # + 0.0: an all-zero block's scale is 0, not -0
    d_ = d[..., None]
    inv = torch.where((d_ != 0) & torch.isfinite(d_), f32(1 / d_), torch.zeros_like(d_))
    r = torch.where(torch.isinf(inv), f32(blocks / d_), f32(blocks * inv))
    t = f32(r + 8.5)
    q = torch.trunc(t.clamp(0, 15)) - 8
    if "swapped_nibbles" in alter:
        q = torch.cat((q[..., BLOCK // 2 :], q[..., : BLOCK // 2]), dim=-1)
    return q.to(torch.int64), d


def padded(v):
    """(R, K) -> (R, Kp): zeros up to a multiple of 32."""
    return torch.nn.functional.pad(v, (0, -v.shape[1] % BLOCK))


def quantized_product(x, w, weights, alter=(), ties=None):
    """x (..., K) float64 activations, w (N, K) float32 values, weights "int8" / "int4" -> x w^T
    (..., N) by the contract (float32 values, as float64), without the bias. ties: see NearTies."""
    lead, K = x.shape[:-1], x.shape[-1]
    xf = padded(f32(x.reshape(-1, K)))
    wq, wd = quantize_q8(padded(w)) if weights == "int8" else quantize_q4(padded(w), alter)
    if "next_row_scale" in alter:  # row n reads row n+1's scales within its group of 4
        N = wd.shape[0]
        groups = torch.nn.functional.pad(wd, (0, 0, 0, -N % 4)).reshape(-1, 4, wd.shape[1])
        wd = groups.roll(-1, dims=1).reshape(-1, wd.shape[1])[:N]
    if "weights_only" in alter:
        xq, xd = xf.reshape(xf.shape[0], -1, BLOCK), torch.ones(xf.shape[0], xf.shape[1] // BLOCK)
        dots = torch.einsum("tbi,nbi->tnb", xq, wq.to(torch.float64))  # float products, not exact
    else:
        xq, xd = quantize_q8(xf, ties)
        dots = torch.einsum("tbi,nbi->tnb", xq, wq).to(torch.float64)  # exact integers
    s = torch.zeros(xf.shape[0], w.shape[0], dtype=torch.float64)
    for b in range(xd.shape[1]):  # blocks in order, float32 sums
        scale = f32(wd[None, :, b] * xd[:, None, b])
        s = f32(s + f32(f32(dots[:, :, b]) * scale))
    return s.reshape(*lead, w.shape[0])


class Quantized:
    """A stored weight matrix S as the references use it: `x @ S` (Conv1D, S (in, out)), `x @ S.T`
    (nn.Linear or an embedding used as the head, S (out, in)) and `S[ids]` (an embedding's rows).
    The product is the quantized one; the rows are the F32 values."""

    def __init__(self, stored, weights, alter, ties):
        self.stored, self.weights, self.alter, self.ties = stored, weights, alter, ties

    @property
    def T(self):
        return Quantized(self.stored.T, self.weights, self.alter, self.ties)

    def __getitem__(self, index):
        return self.stored[index]

    def __rmatmul__(self, x):  # x @ S = x (S^T)^T: S^T's rows are the quantized ones, along K
        return quantized_product(x, self.stored.T.contiguous(), self.weights, self.alter, self.ties)


# ---------------------------------------------------------------------------------------------
# Reading a fixture


FLOATS = {"F32": "<f4", "F16": "<f2"}


def read_safetensors(path):
    """{name: float64 tensor of float32 values} of the F32/F16/BF16 tensors of one file."""
    data = open(path, "rb").read()
    (n,) = struct.unpack("<Q", data[:8])
    out = {}
    for name, e in json.loads(data[8 : 8 + n]).items():
        if name == "__metadata__" or e["dtype"] not in ("F32", "F16", "BF16"):
            continue  # buffers (U8 / BOOL masks) the engine ignores
        start, end = (8 + n + o for o in e["data_offsets"])
        if e["dtype"] == "BF16":  # the top 16 bits of a float32
            arr = (np.frombuffer(data[start:end], dtype="<u2").astype(np.uint32) << 16).view(np.float32)
        else:
            arr = np.frombuffer(data[start:end], dtype=FLOATS[e["dtype"]]).astype(np.float32)
        out[name] = torch.from_numpy(arr.copy()).reshape(e["shape"]).to(torch.float64)
    return out


def read_weights(directory):
    """model.safetensors, or the shards model.safetensors.index.json names."""
    index = os.path.join(directory, "model.safetensors.index.json")
    if not os.path.exists(index):
        return read_safetensors(os.path.join(directory, "model.safetensors"))
    weight_map = json.load(open(index))["weight_map"]
    out = {}
    for shard in sorted(set(weight_map.values())):
        out.update(read_safetensors(os.path.join(directory, shard)))
    return {name: out[name] for name in weight_map if name in out}


def load(name):
    """-> (forward(weights) -> logits [T,V], plain weights {name: float64 tensor}, tokens)."""
    directory = os.path.join(FIXTURES_DIR, name)
    config = json.load(open(os.path.join(directory, "config.json")))
    tokens = json.load(open(os.path.join(directory, "expected.json")))["tokens"]
    w = read_weights(directory)
    if config["model_type"] in ("gpt2", "openai-gpt"):
        w = {k.removeprefix("transformer."): t for k, t in w.items()}
        if config.get("position_encoding") == "sinusoidal":  # computed, not stored
            w["wpe.weight"] = make_fixtures.sinusoidal_positions(config["n_positions"], config["n_embd"])
        spec = spec_of(config)
        return (lambda weights: make_fixtures.forward(spec, weights, tokens)[0]), w, tokens
    s = decoder_files.read_config(directory)
    return (lambda weights: decoder_reference.forward(s, weights, tokens)[0]), w, tokens


def quantized_weights(w, weights, alter=(), ties=None):
    """Every matrix (2-D tensor) wrapped; vectors (biases, norms) as they are."""
    return {k: Quantized(t, weights, alter, ties) if t.dim() == 2 else t for k, t in w.items()}


# ---------------------------------------------------------------------------------------------
# Driver


def make(name):
    forward, w, tokens = load(name)
    expected = torch.tensor(
        json.load(open(os.path.join(FIXTURES_DIR, name, "expected.json")))["logits"], dtype=torch.float64
    )
    plain = forward(w)
    read_error = float((plain - expected).abs().max())
    if read_error > 1e-6:  # expected.json holds 9 significant digits
        raise RuntimeError(f"{name}: the plain forward pass is {read_error:.3g} from expected.json")
    out, line = {"tokens": tokens}, f"{name:27s}"
    for weights in MODES:
        ties = NearTies()
        logits = forward(quantized_weights(w, weights, ties=ties))
        near = ties.found
        if len(near) > MAX_NEAR_TIES:
            raise RuntimeError(f"{name} {weights}: {len(near)} activations next to a rounding point")
        out[weights] = {"logits": make_fixtures.rounded(logits.tolist()), "near_ties": [list(n) for n in near]}
        alternatives = []
        for subset in range(1, 2 ** len(near)):  # every other way of rounding them
            flipped = [i for i in range(len(near)) if subset >> i & 1]
            other = forward(quantized_weights(w, weights, ties=NearTies(near[i] for i in flipped)))
            alternatives.append({"flipped": flipped, "logits": make_fixtures.rounded(other.tolist())})
        out[weights]["alternatives"] = alternatives
        line += f"  {weights}: max |q - f32| {float((logits - plain).abs().max()):.3g}, {len(near)} near ties"
        for alter in ALTERATIONS:
            if weights == "int8" and alter in ("swapped_nibbles", "max_over_7"):
                continue
            move = float((forward(quantized_weights(w, weights, (alter,))) - logits).abs().max())
            if move <= MIN_MOVE:
                raise RuntimeError(f"{name} {weights}: {alter} moves the logits by only {move:.3g}")
            line += f" {alter}:{move:.2g}"
    os.makedirs(OUT_DIR, exist_ok=True)
    make_fixtures.write_file(os.path.join(OUT_DIR, name + ".json"), make_fixtures.dump(out) + "\n")
    print(line)


def main():
    torch.set_num_threads(1)  # identical float64 reductions on every run
    for name in sys.argv[1:] or FIXTURES:
        make(name)


if __name__ == "__main__":
    main()
