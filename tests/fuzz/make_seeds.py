#!/usr/bin/python3
"""Writes the seed corpora of the libFuzzer targets (tests/fuzz/corpus/<target>/seed-*).

Seeds are small valid inputs (and a few near misses) from which libFuzzer mutates; the files
named crash-* beside them are inputs that once crashed a target, kept as regression tests.
Python's standard library only; deterministic. Run again after changing it:
    /usr/bin/python3 tests/fuzz/make_seeds.py
"""
import json
import random
import struct
from pathlib import Path

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "corpus"
FIXTURES = HERE.parent / "fixtures"
rng = random.Random(8)


def safetensors(tensors, metadata=None):
    """tensors: [(name, dtype, shape, raw bytes)] -> the bytes of a safetensors file."""
    header, data = {}, b""
    if metadata:
        header["__metadata__"] = metadata
    for name, dtype, shape, raw in tensors:
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)  # the data section 8-byte aligned, as the reference writer does
    return struct.pack("<Q", len(text)) + text + data


def floats(n, dtype="F32", scale=0.5):
    values = [rng.gauss(0.0, scale) for _ in range(n)]
    if dtype == "F32":
        return struct.pack(f"<{n}f", *values)
    if dtype == "F16":
        return struct.pack(f"<{n}e", *values)
    # BF16: the top half of each float
    return b"".join(struct.pack("<f", v)[2:] for v in values)


def tiny_model(model_type, dtype="F32", V=16, P=8, C=8, L=1, H=2, prefix=""):
    """A config.json and a safetensors file for a model of this shape, random weights."""
    F = 4 * C
    config = {
        "model_type": model_type,
        "vocab_size": V,
        "n_positions": P,
        "n_embd": C,
        "n_layer": L,
        "n_head": H,
        "layer_norm_epsilon": 1e-5,
    }
    if model_type == "gpt2":
        config.update(
            {"n_inner": None, "activation_function": "gelu_new", "bos_token_id": V - 1, "eos_token_id": V - 1}
        )
        embed = [("wte.weight", [V, C]), ("wpe.weight", [P, C])]
        final = [("ln_f.weight", [C]), ("ln_f.bias", [C])]
    else:
        config["afn"] = "gelu"
        embed = [("tokens_embed.weight", [V, C]), ("positions_embed.weight", [P, C])]
        final = []
    shapes = list(embed)
    for l in range(L):
        h = f"h.{l}."
        shapes += [
            (h + "ln_1.weight", [C]),
            (h + "ln_1.bias", [C]),
            (h + "attn.c_attn.weight", [C, 3 * C]),
            (h + "attn.c_attn.bias", [3 * C]),
            (h + "attn.c_proj.weight", [C, C]),
            (h + "attn.c_proj.bias", [C]),
            (h + "ln_2.weight", [C]),
            (h + "ln_2.bias", [C]),
            (h + "mlp.c_fc.weight", [C, F]),
            (h + "mlp.c_fc.bias", [F]),
            (h + "mlp.c_proj.weight", [F, C]),
            (h + "mlp.c_proj.bias", [C]),
        ]
    shapes += final
    tensors = []
    for name, shape in shapes:
        n = 1
        for s in shape:
            n *= s
        tensors.append((prefix + name, dtype, shape, floats(n, dtype)))
    return json.dumps(config, indent=2).encode(), safetensors(tensors, {"format": "pt"})


# config.json of the decoders read as features (core/io/config_decoders.cpp): GQA and llama3
# rope scaling, v5's rope_parameters with partial rotary, gpt_neo's local layers, qwen2's windows.
DECODER_CONFIGS = {
    "llama-gqa-llama3": {
        "model_type": "llama",
        "hidden_size": 64,
        "intermediate_size": 128,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "head_dim": 16,
        "max_position_embeddings": 128,
        "rms_norm_eps": 1e-05,
        "rope_theta": 500000.0,
        "rope_scaling": {
            "factor": 32.0,
            "high_freq_factor": 4.0,
            "low_freq_factor": 1.0,
            "original_max_position_embeddings": 64,
            "rope_type": "llama3",
        },
        "tie_word_embeddings": True,
        "vocab_size": 96,
        "bos_token_id": 0,
        "eos_token_id": [1, 2],
    },
    "gpt-neox-v5": {
        "model_type": "gpt_neox",
        "hidden_size": 32,
        "intermediate_size": 128,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "max_position_embeddings": 64,
        "layer_norm_eps": 1e-05,
        "rope_parameters": {"rope_type": "default", "rope_theta": 10000, "partial_rotary_factor": 0.25},
        "use_parallel_residual": False,
        "vocab_size": 96,
        "eos_token_id": 0,
    },
    "gpt-neo-local": {
        "model_type": "gpt_neo",
        "hidden_size": 32,
        "num_layers": 4,
        "num_heads": 4,
        "max_position_embeddings": 64,
        "window_size": 8,
        "attention_types": [[["global", "local"], 2]],
        "activation_function": "gelu_new",
        "vocab_size": 96,
        "bos_token_id": 95,
        "eos_token_id": 95,
    },
    "qwen2-windows": {
        "model_type": "qwen2",
        "hidden_size": 32,
        "num_hidden_layers": 3,
        "num_attention_heads": 4,
        "num_key_value_heads": 1,
        "use_sliding_window": True,
        "sliding_window": 4,
        "max_window_layers": 1,
        "vocab_size": 96,
    },
}


def tiny_decoder(model_type, extra, dtype="F32"):
    """A config.json and a safetensors file of a one-layer decoder of this type with the hub's
    tensor names: 16 tokens, 8 positions, width 8, 2 query heads of 4 (llama-likes: 1 key/value
    head), MLP 16."""
    V, P, C, F = 16, 8, 8, 16
    config = {
        "model_type": model_type,
        "vocab_size": V,
        "max_position_embeddings": P,
        "hidden_size": C,
        "intermediate_size": F,
        "num_hidden_layers": 1,
        "num_attention_heads": 2,
        **extra,
    }
    norm = lambda n: [(n + ".weight", [C])] + ([(n + ".bias", [C])] if model_type in ("gpt_neox", "gpt_neo") else [])
    if model_type == "gpt_neox":
        h = "gpt_neox.layers.0."
        shapes = [("gpt_neox.embed_in.weight", [V, C]), ("embed_out.weight", [V, C])]
        shapes += norm(h + "input_layernorm") + norm(h + "post_attention_layernorm") + norm("gpt_neox.final_layer_norm")
        shapes += [
            (h + "attention.query_key_value.weight", [3 * C, C]),
            (h + "attention.query_key_value.bias", [3 * C]),
        ]
        shapes += [(h + "attention.dense.weight", [C, C]), (h + "attention.dense.bias", [C])]
        shapes += [(h + "mlp.dense_h_to_4h.weight", [F, C]), (h + "mlp.dense_h_to_4h.bias", [F])]
        shapes += [(h + "mlp.dense_4h_to_h.weight", [C, F]), (h + "mlp.dense_4h_to_h.bias", [C])]
    elif model_type == "gpt_neo":
        h = "transformer.h.0."
        shapes = [("transformer.wte.weight", [V, C]), ("transformer.wpe.weight", [P, C])]
        shapes += norm(h + "ln_1") + norm(h + "ln_2") + norm("transformer.ln_f")
        shapes += [(h + f"attn.attention.{x}_proj.weight", [C, C]) for x in "qkv"]
        shapes += [(h + "attn.attention.out_proj.weight", [C, C]), (h + "attn.attention.out_proj.bias", [C])]
        shapes += [(h + "mlp.c_fc.weight", [F, C]), (h + "mlp.c_fc.bias", [F])]
        shapes += [(h + "mlp.c_proj.weight", [C, F]), (h + "mlp.c_proj.bias", [C])]
    else:  # llama, mistral, qwen2, qwen3: 1 key/value head, head_dim 4
        h = "model.layers.0."
        shapes = [("model.embed_tokens.weight", [V, C])]
        shapes += norm(h + "input_layernorm") + norm(h + "post_attention_layernorm") + norm("model.norm")
        shapes += [(h + "self_attn.q_proj.weight", [C, C]), (h + "self_attn.o_proj.weight", [C, C])]
        shapes += [(h + "self_attn.k_proj.weight", [4, C]), (h + "self_attn.v_proj.weight", [4, C])]
        if model_type == "qwen2":
            shapes += [(h + "self_attn.q_proj.bias", [C]), (h + "self_attn.k_proj.bias", [4])]
            shapes += [(h + "self_attn.v_proj.bias", [4])]
        if model_type == "qwen3":
            shapes += [(h + "self_attn.q_norm.weight", [4]), (h + "self_attn.k_norm.weight", [4])]
        shapes += [(h + "mlp.gate_proj.weight", [F, C]), (h + "mlp.up_proj.weight", [F, C])]
        shapes += [(h + "mlp.down_proj.weight", [C, F])]
        if not config.get("tie_word_embeddings", False):
            shapes.append(("lm_head.weight", [V, C]))
    tensors = []
    for name, shape in sorted(shapes):
        n = 1
        for d in shape:
            n *= d
        tensors.append((name, dtype, shape, floats(n, dtype)))
    return json.dumps(config, indent=2).encode(), safetensors(tensors, {"format": "pt"})


def write(target, name, data):
    d = CORPUS / target
    d.mkdir(parents=True, exist_ok=True)
    (d / f"seed-{name}").write_bytes(data)


def main():
    for d in CORPUS.glob("*"):
        for f in d.glob("seed-*"):
            f.unlink()

    # safetensors: each float dtype, 1-D and 2-D, metadata, an integer tensor, an empty file
    write("safetensors", "f32", safetensors([("a", "F32", [2, 3], floats(6)), ("b", "F32", [4], floats(4))]))
    write("safetensors", "f16", safetensors([("w", "F16", [3, 2], floats(6, "F16"))], {"format": "pt"}))
    write("safetensors", "bf16", safetensors([("w", "BF16", [2, 2], floats(4, "BF16")), ("s", "F32", [], floats(1))]))
    write("safetensors", "mask", safetensors([("h.0.attn.bias", "U8", [1, 1, 2, 2], bytes([1, 0, 1, 1]))]))
    write("safetensors", "empty-header", struct.pack("<Q", 2) + b"{}")

    # config.json: the fixtures' configs and the shipped model's
    for fixture in ["gpt2-f32", "openai-gpt", "openai-gpt-relu-f16", "gpt2-single-head"]:
        write("config", fixture, (FIXTURES / fixture / "config.json").read_bytes())
    write("config", "shipped", (HERE.parent.parent / "web/models/brown-small/config.json").read_bytes())
    for name, config in DECODER_CONFIGS.items():
        write("config", name, json.dumps(config, indent=1).encode())

    # vocab.json \0 merges.txt: a byte-level BPE over a few letters
    byte_vocab = {chr(c): i for i, c in enumerate(range(ord("a"), ord("z") + 1))}
    byte_vocab.update({"Ġ": 26, "Ċ": 27, "th": 28, "the": 29, "Ġthe": 30, "<|endoftext|>": 31})
    merges = "#version: 0.2\nt h\nth e\nĠ the\n"
    write("vocab", "small", json.dumps(byte_vocab).encode() + b"\0" + merges.encode())
    write("vocab", "no-header", json.dumps({"a": 0, "b": 1, "ab": 2}).encode() + b"\0" + b"a b\n")

    # tokenizer: text of every kind the pre-tokenizer distinguishes, and invalid UTF-8
    texts = [
        b"Hello world! It's 2026, isn't it?",
        "caf\u00e9 na\u00efve \u00fcber \u4e2d\u6587 \U0001F642\U0001F44D".encode(),
        b"  leading   spaces\n\n\ttabs\r\n",
        b"<|endoftext|>between<|endoftext|>",
        b"1234567890 3.14159 -42",
        b"\xff\xfe invalid \xc3 utf-8 \xed\xa0\x80",
        b"'s 't 're 've 'm 'll 'd",
        b"",
    ]
    for i, t in enumerate(texts):
        write("tokenizer", f"text-{i}", t)

    # tokenizer_json: tokenizer.json \0 text, the small fixtures' files (byte-level and
    # SentencePiece-style pipelines) with texts that reach their byte fallback and special tokens
    tokenizer_texts = [b"", "<s>Hello \u4f60\u597d  world 12345 \U0001F642\n".encode(), b"<|endoftext|> x"]
    for i, fixture in enumerate(sorted((FIXTURES / "tokenizer-json").glob("*/tokenizer.json"))):
        if fixture.stat().st_size < 100_000:
            text = tokenizer_texts[i % len(tokenizer_texts)]
            write("tokenizer_json", fixture.parent.name, fixture.read_bytes() + (b"\0" + text if text else b""))

    # chat_template: template \0 messages, the real templates of tests/fixtures/chat over a
    # conversation of theirs
    for fixture in sorted((FIXTURES / "chat").glob("*.json")):
        if fixture.stem == "features":
            continue
        chat = json.loads(fixture.read_text(encoding="utf-8"))
        messages = json.dumps(chat["cases"][0]["messages"], ensure_ascii=False)
        write("chat_template", fixture.stem, chat["template"].encode() + b"\0" + messages.encode())
    write(
        "chat_template",
        "features",
        "\n".join(
            c["template"] for c in json.loads((FIXTURES / "chat/features.json").read_text(encoding="utf-8"))["cases"]
        ).encode(),
    )

    # chat_files: b"\0" + generation_config.json, b"\1" + tokenizer_config.json
    write(
        "chat_files",
        "qwen3-generation",
        b"\0"
        + json.dumps(
            {
                "bos_token_id": 151643,
                "do_sample": True,
                "eos_token_id": [151645, 151643],
                "temperature": 0.6,
                "top_k": 20,
                "top_p": 0.95,
            }
        ).encode(),
    )
    write(
        "chat_files",
        "greedy-generation",
        b"\0"
        + json.dumps({"do_sample": False, "eos_token_id": 2, "repetition_penalty": 1.1, "temperature": None}).encode(),
    )
    for fixture in ["qwen3", "llama3"]:
        chat = json.loads((FIXTURES / "chat" / f"{fixture}.json").read_text(encoding="utf-8"))
        config = {
            "chat_template": chat["template"],
            "bos_token": chat["bos_token"],
            "eos_token": {"__type": "AddedToken", "content": chat["eos_token"], "special": True},
        }
        write("chat_files", f"{fixture}-tokenizer-config", b"\1" + json.dumps(config, ensure_ascii=False).encode())
    write(
        "chat_files",
        "template-list",
        b"\1"
        + json.dumps(
            {
                "chat_template": [
                    {"name": "default", "template": "{{ bos_token }}"},
                    {"name": "tool_use", "template": "x"},
                ]
            }
        ).encode(),
    )

    # model: config.json \0 model.safetensors, tiny models of both architectures and each dtype
    for name, args in [
        ("gpt2", ("gpt2",)),
        ("gpt2-f16", ("gpt2", "F16")),
        ("gpt2-bf16", ("gpt2", "BF16")),
        ("openai-gpt", ("openai-gpt",)),
        ("gpt2-prefixed", ("gpt2", "F32", 16, 8, 8, 1, 2, "transformer.")),
        ("gpt2-two-layers", ("gpt2", "F32", 12, 4, 4, 2, 1)),
    ]:
        config, weights = tiny_model(*args)
        write("model", name, config + b"\0" + weights)
    # and the decoders: GQA with llama3 rope, sliding windows, biases, q/k norm, partial rotary,
    # gpt_neo's local layers, BF16
    llama3 = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0}
    for name, (model_type, extra, dtype) in {
        "llama": (
            "llama",
            {"num_key_value_heads": 1, "rope_scaling": {**llama3, "original_max_position_embeddings": 4}},
            "F32",
        ),
        "mistral-bf16": ("mistral", {"num_key_value_heads": 1, "sliding_window": 3}, "BF16"),
        "qwen2": ("qwen2", {"num_key_value_heads": 1, "tie_word_embeddings": True}, "F32"),
        "qwen3": (
            "qwen3",
            {
                "num_key_value_heads": 1,
                "head_dim": 4,
                "use_sliding_window": True,
                "sliding_window": 2,
                "max_window_layers": 0,
            },
            "F16",
        ),
        "gpt-neox": ("gpt_neox", {"rotary_pct": 0.5, "use_parallel_residual": True}, "F32"),
        "gpt-neo": (
            "gpt_neo",
            {"num_layers": 1, "num_heads": 2, "attention_types": [[["local"], 1]], "window_size": 3},
            "F32",
        ),
    }.items():
        config, weights = tiny_decoder(model_type, extra, dtype)
        write("model", name, config + b"\0" + weights)


if __name__ == "__main__":
    main()
