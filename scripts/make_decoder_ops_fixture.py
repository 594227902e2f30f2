#!/usr/bin/python3
"""Expected values of the modern decoders' reference operations (core/kernels/reference.h:
rmsnorm, rotary, swiglu, attention_gqa; core/model/rotary.h: rotary_inv_freq), computed in plain
PyTorch by code of this script's own, written from transformers' formulas (modeling_rope_utils.py,
modeling_llama.py, masking_utils.py). Writes tests/fixtures/decoder-ops/ops.json, which
tests/decoder_ops_test.cpp reads.

Usage: /usr/bin/python3 scripts/make_decoder_ops_fixture.py
"""
import json
import math
import pathlib

import torch

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "decoder-ops" / "ops.json"


def inv_freq_default(theta, dim):
    return 1.0 / (theta ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))


def inv_freq_llama3(theta, dim, factor, low_freq_factor, high_freq_factor, old_context_len):
    inv_freq = inv_freq_default(theta, dim)
    low_freq_wavelen = old_context_len / low_freq_factor
    high_freq_wavelen = old_context_len / high_freq_factor
    wavelen = 2 * math.pi / inv_freq
    scaled = torch.where(wavelen > low_freq_wavelen, inv_freq / factor, inv_freq)
    smooth = (old_context_len / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor)
    smoothed = (1 - smooth) * scaled / factor + smooth * scaled
    medium = ~(wavelen < high_freq_wavelen) * ~(wavelen > low_freq_wavelen)
    return torch.where(medium, smoothed, scaled)


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def rope(x, positions, inv_freq, rot_dim):
    """x (T, H, hd): the first rot_dim dims of each head rotated, the rest passed through."""
    freqs = positions.float()[:, None] * inv_freq[None, :]  # (T, rot/2)
    emb = torch.cat((freqs, freqs), dim=-1)  # (T, rot)
    cos, sin = emb.cos()[:, None, :], emb.sin()[:, None, :]
    rot, rest = x[..., :rot_dim], x[..., rot_dim:]
    return torch.cat((rot * cos + rotate_half(rot) * sin, rest), dim=-1)


def rmsnorm(x, weight, eps):
    variance = x.pow(2).mean(-1, keepdim=True)
    return weight * (x * torch.rsqrt(variance + eps))


def attention(q, k, v, pos0, n_head, n_kv, scale, window):
    """q (T, H, hd), k/v (S, KV, hd), S = pos0 + T: causal, a window of `window` keys (0: none)."""
    T, S = q.shape[0], k.shape[0]
    k = k.repeat_interleave(n_head // n_kv, dim=1)
    v = v.repeat_interleave(n_head // n_kv, dim=1)
    scores = torch.einsum("thd,shd->hts", q, k) * scale
    qpos = torch.arange(pos0, pos0 + T)[:, None]
    kpos = torch.arange(S)[None, :]
    visible = kpos <= qpos
    if window > 0:
        visible &= kpos > qpos - window
    scores = scores.masked_fill(~visible[None], float("-inf"))
    probs = scores.softmax(-1)
    return torch.einsum("hts,shd->thd", probs, v), probs


def flat(t):
    return [float(x) for x in t.flatten()]


def main():
    g = torch.Generator().manual_seed(39)
    out = {}

    out["inv_freq_default"] = {"theta": 10000.0, "dim": 16, "values": flat(inv_freq_default(10000.0, 16))}
    out["inv_freq_linear"] = {
        "theta": 10000.0,
        "dim": 16,
        "factor": 4.0,
        "values": flat(inv_freq_default(10000.0, 16) / 4.0),
    }
    # Llama 3.2's parameters: every regime (kept, blended, divided) occurs among the 32 frequencies.
    out["inv_freq_llama3"] = {
        "theta": 500000.0,
        "dim": 64,
        "factor": 32.0,
        "low_freq_factor": 1.0,
        "high_freq_factor": 4.0,
        "original_max_position_embeddings": 8192,
        "values": flat(inv_freq_llama3(500000.0, 64, 32.0, 1.0, 4.0, 8192)),
    }

    T, H, hd, rot, pos0 = 3, 2, 8, 4, 5  # partial rotary: half of each head turns
    x = torch.randn(T, H, hd, generator=g)
    inv = inv_freq_default(10000.0, rot)
    out["rotary"] = {
        "T": T,
        "heads": H,
        "hd": hd,
        "rot_dim": rot,
        "pos0": pos0,
        "theta": 10000.0,
        "x": flat(x),
        "expected": flat(rope(x, torch.arange(pos0, pos0 + T), inv, rot)),
    }

    C = 6
    x = torch.randn(2, C, generator=g) * 3
    w = torch.randn(C, generator=g)
    out["rmsnorm"] = {
        "T": 2,
        "C": C,
        "eps": 1e-6,
        "x": flat(x),
        "weight": flat(w),
        "expected": flat(rmsnorm(x, w, 1e-6)),
    }

    gate, up = torch.randn(8, generator=g) * 4, torch.randn(8, generator=g)
    out["swiglu"] = {"gate": flat(gate), "up": flat(up), "expected": flat(torch.nn.functional.silu(gate) * up)}

    # Grouped-query attention, 4 query heads on 2 key/value heads, a window of 3 keys shorter than
    # the 6 positions, the last 4 of them queried (pos0 2). Large values: far from uniform.
    T, pos0, Hq, KV, hd, window = 4, 2, 4, 2, 4, 3
    q = torch.randn(T, Hq, hd, generator=g) * 2
    k = torch.randn(pos0 + T, KV, hd, generator=g) * 2
    v = torch.randn(pos0 + T, KV, hd, generator=g)
    scale = 1 / math.sqrt(hd)
    o, p = attention(q, k, v, pos0, Hq, KV, scale, window)
    out["attention_gqa"] = {
        "T": T,
        "pos0": pos0,
        "n_head": Hq,
        "n_kv": KV,
        "hd": hd,
        "window": window,
        "scale": scale,
        "q": flat(q),
        "k": flat(k),
        "v": flat(v),
        "out": flat(o),
        "probs": flat(p),
    }

    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
