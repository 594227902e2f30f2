#include "model/weights.h"

#include <algorithm>
#include <cstring>
#include <initializer_list>
#include <set>
#include <tuple>

#include "io/dtype.h"
#include "kernels/kernels.h"
#include "kernels/quantized.h"
#include "model/thread_pool.h"
#include "glassbox/error.h"
#include "glassbox/quoted.h"
#include "glassbox/threads.h"

namespace glassbox {

QkvLayout qkv_layout(const ModelConfig& c) {
  switch (c.architecture) {
    case Architecture::GPT2:
    case Architecture::OpenAIGPT:
      return QkvLayout::Fused;
    case Architecture::GPTNeoX:
      return QkvLayout::FusedPerHead;
    default:
      return QkvLayout::Separate;
  }
}

namespace {

// Each array the loader allocates is aligned to 64 bytes (model/arena.h): at most that much more
// than its size.
constexpr std::uint64_t kAllocationSlack = 64;

std::string shape_str(const std::vector<std::int64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

// One dimension of a tensor's expected shape, and where the config says so ("hidden_size 64",
// "num_key_value_heads 2 x head_dim 16 = 32"): a shape that disagrees names its cause. The text
// is made once per load (it must outlive the Dim) and read only for that message.
struct Dim {
  Dim(std::int64_t n) : n(n) {}   // implicit: a plain size, unexplained (gpt2, openai-gpt)
  Dim(std::int64_t n, const std::string& why) : n(n), why(&why) {}
  std::int64_t n;
  const std::string* why = nullptr;
};
using Shape = std::initializer_list<Dim>;

// "key 4", or with a head_dim "key 4 x head_dim 16 = 64", or `times` that: what the config says of a size.
std::string said(const char* key, std::int64_t v, std::int64_t head_dim = 0, int times = 1) {
  std::string s = (times > 1 ? std::to_string(times) + " x " : "") + key + " " + std::to_string(v);
  if (head_dim) s += " x head_dim " + std::to_string(head_dim) + " = " + std::to_string(times * v * head_dim);
  return s;
}

// Finds and checks every tensor, allocates the arrays it becomes and records how (a TensorJob);
// given a footprint, only counts what it would allocate (the arrays are then null).
class Loader {
 public:
  Loader(const SafeTensors& file, ModelWeights& out, WeightSource source, LoadFootprint* count = nullptr)
      : file_(file), out_(out), source_(source), count_(count), jobs_(file.tensors().size()) {
    // Hub checkpoints saved from *ForCausalLM / *LMHeadModel carry their base model's prefix
    // ("transformer.", "model.", "gpt_neox."); base models saved alone do not.
    bool embedding = false;
    for (const char* prefix : {"", "transformer.", "model.", "gpt_neox."})
      for (const char* first : {"wte.weight", "tokens_embed.weight", "embed_tokens.weight", "embed_in.weight"})
        if (file.find(std::string(prefix) + first)) prefix_ = prefix, embedding = true;
    // Without an embedding, the prefix the layers carry, so that the message names the embedding
    // the checkpoint lacks as its base model would.
    if (!embedding)
      for (const TensorInfo& t : file.tensors())
        for (const char* prefix : {"transformer.", "model.", "gpt_neox."})
          if (t.name.starts_with(prefix)) prefix_ = prefix;
    for (std::size_t i = 0; i < jobs_.size(); ++i) jobs_[i].tensor = &file.tensors()[i];
  }

  // The tensor `name` as F32 with the given shape: the file's bytes where they are when they are
  // kept and already F32 (and aligned), else rows of the model's own.
  // top_level: a tensor of the task head beside the transformer ("score.weight"), which has no
  // prefix even when the transformer's tensors have one.
  const float* take(const std::string& name, Shape shape, bool top_level = false) {
    TensorJob& job = find(name, shape, top_level);
    const TensorInfo& t = *job.tensor;
    if (source_ == WeightSource::Kept && in_place(t)) return reinterpret_cast<const float*>(t.bytes.data());
    job.to_rows = true;
    job.rows = own<float>(t.numel);
    return job.rows;
  }

  // A tensor whose shape is checked and whose values are not used.
  void check(const std::string& name, Shape shape) { find(name, shape); }

  // The matrix `name` as (N,K) in nn.Linear layout (GPT's Conv1D weights, stored (K,N), are
  // transposed), packed for the kernels or quantized to int8 or int4 blocks.
  Matrix matrix(const std::string& name, const Dim& N, const Dim& K, bool transpose, Quantization quantize,
                bool top_level = false) {
    TensorJob& job = transpose ? find(name, {K, N}, top_level) : find(name, {N, K}, top_level);
    MatrixJob m{.N = static_cast<int>(N.n),
                .K = static_cast<int>(K.n),
                .transpose = transpose,
                .quantized = quantize != Quantization::None};
    const kernels::Q8Shape s(m.N, m.K);
    if (quantize == Quantization::None) {
      m.packed = own<float>(N.n * K.n);
    } else {
      if (quantize == Quantization::Int8)
        m.q = own<std::int8_t>(static_cast<std::int64_t>(s.q_size()));
      else
        m.q4 = own<std::uint8_t>(static_cast<std::int64_t>(s.q4_size()));
      m.d = own<float>(static_cast<std::int64_t>(s.d_size()));
    }
    job.matrix = m;
    return {m.packed, m.q, m.q4, m.d, m.N, m.K};
  }

  // The jobs in the order of the tensors' bytes (offsets tile the data section: safetensors.cpp),
  // shard after shard.
  std::vector<TensorJob> jobs_in_file_order() const {
    std::vector<TensorJob> jobs = jobs_;
    std::stable_sort(jobs.begin(), jobs.end(), [](const TensorJob& a, const TensorJob& b) {
      return a.tensor->shard != b.tensor->shard ? a.tensor->shard < b.tensor->shard
                                                : a.tensor->offset < b.tensor->offset;
    });
    return jobs;
  }

  // Every tensor in the file must have been used, except buffers Hugging Face stores alongside.
  void check_all_used(const ModelConfig& c) const {
    for (const TensorJob& job : jobs_) {
      const TensorInfo& t = *job.tensor;
      if (used_.count(t.name)) continue;
      const std::string& n = t.name;
      auto ends_with = [&](std::string_view s) {
        return n.size() >= s.size() && n.compare(n.size() - s.size(), s.size(), s) == 0;
      };
      // causal-mask buffers (gpt2's, gpt_neo's, gpt_neox's) and rotary frequencies, as older
      // checkpoints stored them
      const auto buffers = {".attn.bias", ".attn.masked_bias", ".attention.bias", ".attention.masked_bias",
                            ".rotary_emb.inv_freq"};
      if (std::any_of(buffers.begin(), buffers.end(), ends_with)) continue;
      if (n == "lm_head.weight" && c.tie_word_embeddings &&
          t.shape == std::vector<std::int64_t>{c.vocab_size, c.n_embd})
        continue;   // the tied head, stored anyway

      throw ModelFormatError(file_.source(), "unexpected tensor '" + n + "' " + shape_str(t.shape) +
                                                 " (does the config match the weights? it has n_layer " +
                                                 std::to_string(c.n_layer) + ")");
    }
  }

  bool has(const std::string& name) const { return file_.find(prefix_ + name) != nullptr; }
  bool has_top_level(const std::string& name) const { return file_.find(name) != nullptr; }
  const std::string& source() const { return file_.source(); }

  // A norm's weight and, for LayerNorm, its bias (C): "<name>.weight", "<name>.bias".
  std::pair<const float*, const float*> norm(const ModelConfig& c, const std::string& name, const Dim& C) {
    const float* weight = take(name + ".weight", {C});
    return {weight, c.norm == Norm::LayerNorm ? take(name + ".bias", {C}) : nullptr};
  }
  // A bias (N) when the model has one there, else null.
  const float* bias(bool present, const std::string& name, const Dim& N) { return present ? take(name, {N}) : nullptr; }

  // A token embedding's rows (RowTable): F32 as take() gives them; a 16-bit tensor's bytes as they
  // are, where they are when the file is kept, else a copy the model owns.
  RowTable row_table(const std::string& name, Shape shape) {
    const TensorInfo& t = *find(name, shape).tensor;
    const int cols = static_cast<int>(t.shape[1]);
    if (t.dtype == DType::F32) return {reinterpret_cast<const std::byte*>(take(name, shape)), DType::F32, cols};
    if (source_ == WeightSource::Kept) return {t.bytes.data(), t.dtype, cols};
    TensorJob& job = find(name, shape);
    job.to_raw_rows = true;
    job.raw_rows = own<std::byte>(static_cast<std::int64_t>(tensor_bytes(t)));
    return {job.raw_rows, t.dtype, cols};
  }

  // The sinusoidal position table (P, C), computed (counting: nothing to compute).
  float* sinusoidal_table(std::int64_t P, std::int64_t C) {
    float* table = own<float>(P * C);
    if (!count_) sinusoidal_positions(table, static_cast<int>(P), static_cast<int>(C));
    return table;
  }

 private:
  // n values of T the model owns (uninitialised: ModelWeights::owned); counting, none (null).
  template <class T>
  T* own(std::int64_t n) {
    if (count_) {
      count_->owned += sizeof(T) * std::uint64_t(n) + kAllocationSlack;
      return nullptr;
    }
    return out_.owned.allocate<T>(static_cast<std::size_t>(n));
  }

  // The tensor `name`'s job, checked: present, with this shape and a float dtype. Marks it used.
  TensorJob& find(const std::string& name, Shape dims, bool top_level = false) {
    std::vector<std::int64_t> shape;
    for (const Dim& d : dims) shape.push_back(d.n);
    const std::string full = (top_level ? "" : prefix_) + name;
    const TensorInfo* t = file_.find(full);
    if (!t) throw ModelFormatError(file_.source(), "missing tensor '" + full + "'");
    if (source_ == WeightSource::Kept && !count_ && t->numel > 0 && t->bytes.empty())
      throw ModelFormatError(file_.source(), "tensor '" + full + "' has no data here (only the header was read)");
    used_.insert(t->name);
    if (t->shape != shape) {
      std::string why;
      for (const Dim& d : dims)
        if (d.why) why += (why.empty() ? " (" : ", ") + *d.why;
      throw ModelFormatError(file_.source(), "tensor '" + t->name + "' has shape " + shape_str(t->shape) +
                                                 ", the config implies " + shape_str(shape) +
                                                 (why.empty() ? "" : why + ")"));
    }
    if (t->dtype != DType::F32 && t->dtype != DType::F16 && t->dtype != DType::BF16)
      throw ModelFormatError(file_.source(), "tensor '" + t->name + "' has dtype " + std::string(dtype_name(t->dtype)) +
                                                 "; weights must be F32, F16 or BF16");
    return jobs_[static_cast<std::size_t>(t - file_.tensors().data())];
  }

  // Whether a kept tensor's bytes can be read as floats where they are: F32 and aligned for them.
  // Given only the header, the file is taken to start at an address aligned for floats (as
  // malloc's and a mapping's are).
  bool in_place(const TensorInfo& t) const {
    if (t.dtype != DType::F32) return false;
    const std::uint64_t address =
        t.bytes.empty() ? file_.data_start(t) + t.offset : reinterpret_cast<std::uintptr_t>(t.bytes.data());
    return address % alignof(float) == 0;
  }

  const SafeTensors& file_;
  ModelWeights& out_;
  WeightSource source_;
  LoadFootprint* count_;
  std::string prefix_;
  std::set<std::string> used_;
  std::vector<TensorJob> jobs_;   // one per tensor, in file.tensors()'s (name) order
};

// The parameters of llama, mistral, qwen2, qwen3, gpt_neox and gpt_neo, by their hub names
// (without the base model's prefix, which the Loader adds): every one pre-norm with a final norm.
void load_decoder(const ModelConfig& c, Loader& load, Quantization quantize, ModelWeights& w) {
  const std::int64_t hd = c.head_dim(), Dq = std::int64_t(c.n_head) * hd, Dkv = std::int64_t(c.kv_heads()) * hd;
  const bool neox = c.architecture == Architecture::GPTNeoX, neo = c.architecture == Architecture::GPTNeo;
  // Each size with the config's keys that make it, for the message of a shape that disagrees.
  const char* heads = neo ? "num_heads" : "num_attention_heads";
  const std::string why[] = {said("hidden_size", c.n_embd),
                             said("intermediate_size", c.n_inner),
                             said("vocab_size", c.vocab_size),
                             said("max_position_embeddings", c.n_positions),
                             said("head_dim", hd),
                             said(heads, c.n_head, hd),
                             said("num_key_value_heads", c.kv_heads(), hd),
                             said(heads, c.n_head, hd, 3)};   // gpt_neox's fused q, k, v: as many kv heads
  const Dim C(c.n_embd, why[0]), F(c.n_inner, why[1]), V(c.vocab_size, why[2]), P(c.n_positions, why[3]),
      HD(hd, why[4]), Q(Dq, why[5]), KV(Dkv, why[6]), QKV(Dq + 2 * Dkv, why[7]);
  const std::string embed = neox ? "embed_in.weight" : neo ? "wte.weight" : "embed_tokens.weight";
  // The output head: the embedding's second copy when tied (as gpt2's), else its own matrix beside
  // the base model (top level: lm_head.weight, gpt_neox's embed_out.weight), which a checkpoint
  // saved tied lacks: the config must say tie_word_embeddings then.
  const std::string head = neox ? "embed_out.weight" : "lm_head.weight";
  if (c.tie_word_embeddings)
    w.lm_head = load.matrix(embed, V, C, /*transpose=*/false, quantize);
  else if (!load.has_top_level(head))
    throw ModelFormatError(load.source(), "missing tensor '" + head +
                                              "': the config's tie_word_embeddings is false, so the output head is "
                                              "its own matrix, not the token embedding");
  else
    w.lm_head = load.matrix(head, V, C, false, quantize, /*top_level=*/true);
  w.wte = load.row_table(embed, {V, C});
  if (c.position_encoding == PositionEncoding::Learned) w.wpe = load.take("wpe.weight", {P, C});
  for (int l = 0; l < c.n_layer; ++l) {
    const std::string h = (neo ? "h." : "layers.") + std::to_string(l) + ".";
    LayerWeights L;
    std::tie(L.ln_1_w, L.ln_1_b) = load.norm(c, h + (neo ? "ln_1" : "input_layernorm"), C);
    std::tie(L.ln_2_w, L.ln_2_b) = load.norm(c, h + (neo ? "ln_2" : "post_attention_layernorm"), C);
    if (neox) {
      L.qkv_w = load.matrix(h + "attention.query_key_value.weight", QKV, C, false, quantize);
      L.qkv_b = load.bias(c.qkv_bias, h + "attention.query_key_value.bias", QKV);
      L.proj_w = load.matrix(h + "attention.dense.weight", C, Q, false, quantize);
      L.proj_b = load.bias(c.attn_out_bias, h + "attention.dense.bias", C);
      L.fc_w = load.matrix(h + "mlp.dense_h_to_4h.weight", F, C, false, quantize);
      L.fc_b = load.bias(c.mlp_bias, h + "mlp.dense_h_to_4h.bias", F);
      L.fc_proj_w = load.matrix(h + "mlp.dense_4h_to_h.weight", C, F, false, quantize);
      L.fc_proj_b = load.bias(c.mlp_bias, h + "mlp.dense_4h_to_h.bias", C);
    } else {
      const std::string a = h + (neo ? "attn.attention." : "self_attn.");
      L.q_w = load.matrix(a + "q_proj.weight", Q, C, false, quantize);
      L.k_w = load.matrix(a + "k_proj.weight", KV, C, false, quantize);
      L.v_w = load.matrix(a + "v_proj.weight", KV, C, false, quantize);
      L.q_b = load.bias(c.qkv_bias, a + "q_proj.bias", Q);
      L.k_b = load.bias(c.qkv_bias, a + "k_proj.bias", KV);
      L.v_b = load.bias(c.qkv_bias, a + "v_proj.bias", KV);
      const std::string out = a + (neo ? "out_proj" : "o_proj");
      L.proj_w = load.matrix(out + ".weight", C, Q, false, quantize);
      L.proj_b = load.bias(c.attn_out_bias, out + ".bias", C);
      if (c.qk_norm) {
        L.q_norm_w = load.take(a + "q_norm.weight", {HD});
        L.k_norm_w = load.take(a + "k_norm.weight", {HD});
      }
      const std::string up = h + (neo ? "mlp.c_fc" : "mlp.up_proj"), down = h + (neo ? "mlp.c_proj" : "mlp.down_proj");
      L.fc_w = load.matrix(up + ".weight", F, C, false, quantize);
      L.fc_b = load.bias(c.mlp_bias, up + ".bias", F);
      if (c.mlp == Mlp::Gated) {
        L.gate_w = load.matrix(h + "mlp.gate_proj.weight", F, C, false, quantize);
        L.gate_b = load.bias(c.mlp_bias, h + "mlp.gate_proj.bias", F);
      }
      L.fc_proj_w = load.matrix(down + ".weight", C, F, false, quantize);
      L.fc_proj_b = load.bias(c.mlp_bias, down + ".bias", C);
    }
    w.layers.push_back(L);
  }
  std::tie(w.ln_f_w, w.ln_f_b) = load.norm(c, neox ? "final_layer_norm" : neo ? "ln_f" : "norm", C);
  load.check_all_used(c);
}

// Every parameter of the model, through `load`, into its place in `w`.
void load_all(const ModelConfig& c, Loader& load, Quantization quantize, ModelWeights& w) {
  if (c.architecture != Architecture::GPT2 && c.architecture != Architecture::OpenAIGPT)
    return load_decoder(c, load, quantize, w);
  const std::int64_t C = c.n_embd, F = c.n_inner, V = c.vocab_size, P = c.n_positions;
  const bool gpt2 = c.architecture == Architecture::GPT2;
  // The LM head is the embedding, tied, in a second copy: packed or int8 for the products, while
  // the embedding stays in rows for looking tokens up (natively the file's pages, read back on
  // demand: a token's row is one or two pages).
  const std::string wte = gpt2 ? "wte.weight" : "tokens_embed.weight";
  w.lm_head = load.matrix(wte, V, C, /*transpose=*/false, quantize);
  w.wte = load.row_table(wte, {V, C});
  if (c.position_encoding == PositionEncoding::Sinusoidal) {
    // Computed. The project's own models also store the table (for other GPT-2 loaders): its
    // shape is checked, its values are not used.
    const std::string stored = gpt2 ? "wpe.weight" : "positions_embed.weight";
    if (load.has(stored)) load.check(stored, {P, C});
    w.wpe = load.sinusoidal_table(P, C);
  } else {
    w.wpe = load.take(gpt2 ? "wpe.weight" : "positions_embed.weight", {P, C});
  }
  for (int l = 0; l < c.n_layer; ++l) {
    const std::string h = "h." + std::to_string(l) + ".";
    LayerWeights L;
    L.ln_1_w = load.take(h + "ln_1.weight", {C});
    L.ln_1_b = load.take(h + "ln_1.bias", {C});
    L.qkv_w = load.matrix(h + "attn.c_attn.weight", 3 * C, C, /*transpose=*/true, quantize);
    L.qkv_b = load.take(h + "attn.c_attn.bias", {3 * C});
    L.proj_w = load.matrix(h + "attn.c_proj.weight", C, C, true, quantize);
    L.proj_b = load.take(h + "attn.c_proj.bias", {C});
    L.ln_2_w = load.take(h + "ln_2.weight", {C});
    L.ln_2_b = load.take(h + "ln_2.bias", {C});
    L.fc_w = load.matrix(h + "mlp.c_fc.weight", F, C, true, quantize);
    L.fc_b = load.take(h + "mlp.c_fc.bias", {F});
    L.fc_proj_w = load.matrix(h + "mlp.c_proj.weight", C, F, true, quantize);
    L.fc_proj_b = load.take(h + "mlp.c_proj.bias", {C});
    if (c.add_cross_attention) {
      L.ln_cross_w = load.take(h + "ln_cross_attn.weight", {C});
      L.ln_cross_b = load.take(h + "ln_cross_attn.bias", {C});
      L.cross_q_w = load.matrix(h + "crossattention.q_attn.weight", C, C, true, quantize);
      L.cross_q_b = load.take(h + "crossattention.q_attn.bias", {C});
      L.cross_kv_w = load.matrix(h + "crossattention.c_attn.weight", 2 * C, C, true, quantize);
      L.cross_kv_b = load.take(h + "crossattention.c_attn.bias", {2 * C});
      L.cross_proj_w = load.matrix(h + "crossattention.c_proj.weight", C, C, true, quantize);
      L.cross_proj_b = load.take(h + "crossattention.c_proj.bias", {C});
    }
    w.layers.push_back(L);
  }
  if (gpt2) {
    w.ln_f_w = load.take("ln_f.weight", {C});
    w.ln_f_b = load.take("ln_f.bias", {C});
  }
  if (!c.labels.empty()) w.score = load.take("score.weight", {std::int64_t(c.labels.size()), C}, /*top_level=*/true);
  load.check_all_used(c);
}

// Whether a matrix job reads its source (F32 rows, or the tensor's bytes) where it is, with no F32
// copy: F32 and aligned for floats.
bool f32_in_place(DType dtype, std::uintptr_t address) { return dtype == DType::F32 && address % alignof(float) == 0; }

// Rows of a (N,K) matrix converted to F32 at a time when its source is not F32 where it is: a
// multiple of 8 (the packed groups) and of 4 (int8's row tiles), about 1 MB of floats. Converting
// the whole matrix first would hold a second, F32 copy of it (an untied output head of a large
// vocabulary: hundreds of MB), which in WebAssembly stays as heap once freed.
int chunk_rows(int N, int K) {
  const int rows = std::max(8, (std::max(1, (1 << 18) / std::max(K, 1)) / 8) * 8);
  return std::min(N, rows);
}

// to_f32 split across the threads: an embedding's rows are hundreds of MB of fresh memory.
void to_f32_on_threads(const TensorInfo& src, float* out) {
  if (src.dtype != DType::F32 && src.dtype != DType::F16 && src.dtype != DType::BF16)   // nothing throws below
    throw ModelFormatError(src.name, "must be F32, F16 or BF16");
  constexpr int kPiece = 1 << 14;   // values
  const std::int64_t n = src.numel, pieces = (n + kPiece - 1) / kPiece;
  const std::size_t size = dtype_size(src.dtype);
  parallel_for(static_cast<int>(pieces), 1, double(n), [&](int p0, int p1) {
    const std::int64_t begin = std::int64_t(p0) * kPiece, end = std::min(n, std::int64_t(p1) * kPiece);
    TensorInfo part = src;
    part.numel = end - begin;
    part.bytes = src.bytes.subspan(std::size_t(begin) * size, std::size_t(end - begin) * size);
    to_f32(part, out + begin);
  });
}

// Rows of a Conv1D matrix (stored (K,N)) transposed at a time when it is quantized: 8 x K floats
// stay in cache until they are quantized. Each thread of the load has one such buffer, instead of
// an F32 copy of the whole matrix (fresh memory, first touched, written and read once more); more
// rows at a time reach further across the stored rows in each pass and were slower
// (docs/performance.md, Loading).
constexpr int kPanelRows = 8;

// Rows n0 .. n0+rows-1 of a matrix from their F32 values (rows,K): packed or quantized.
void finish_rows(const MatrixJob& m, const float* f32, int n0, int rows) {
  const kernels::Q8Shape s(m.N, m.K);
  if (!m.quantized)
    kernels::pack_matrix(m.packed + std::size_t(n0) * m.K, f32, rows, m.K);
  else if (m.q)
    kernels::quantize_weights_q8(m.q + std::size_t(n0) * s.Kp, m.d + std::size_t(n0) * s.blocks, f32, rows, m.K);
  else
    kernels::quantize_weights_q4(m.q4 + std::size_t(n0) * s.Kp / 2, m.d + std::size_t(n0) * s.blocks, f32, rows, m.K);
}

// Packs or quantizes a matrix from `src` (the whole tensor). F32 in place: straight from it.
// Conv1D weights, stored (K,N): F32 ones are packed straight from (K,N); F16/BF16 ones to pack go
// through one F32 copy in (N,K) rows, freed once the final form exists; ones to quantize go
// kPanelRows rows at a time through a small buffer per thread.
// nn.Linear weights (N,K) in F16/BF16: chunk_rows rows at a time through a small F32 buffer
// (a slice of rows starting at a multiple of 8 packs, or quantizes, as the whole matrix's rows).
// Each step is split across the threads (glassbox/threads.h) by rows: quantizing, converting and
// transposing run at a few GB/s per core, so one thread would hold a quantized load of a large
// file to well under the speed the page cache gives it.
void convert_matrix(const MatrixJob& m, const TensorInfo& src) {
  if (src.dtype != DType::F32 && src.dtype != DType::F16 && src.dtype != DType::BF16)   // nothing throws below
    throw ModelFormatError(src.name, "a matrix must be F32, F16 or BF16");
  const bool in_place = f32_in_place(src.dtype, reinterpret_cast<std::uintptr_t>(src.bytes.data()));
  constexpr int kSlice = 8;   // rows per slice: packed groups and int8/int4 row tiles start on them
  const auto slices = [&](int rows, const auto& fn) {   // fn(r0, r1) over [0, rows) on the threads
    parallel_for(rows, kSlice, double(rows) * m.K, fn);
  };
  const auto finish = [&](const float* f32, int n0, int rows) {   // rows n0 .. n0+rows-1, F32 (rows,K)
    slices(rows, [&](int r0, int r1) { finish_rows(m, f32 + std::size_t(r0) * m.K, n0 + r0, r1 - r0); });
  };
  if (m.transpose) {
    if (!m.quantized && in_place)
      return kernels::pack_matrix_transposed(m.packed, reinterpret_cast<const float*>(src.bytes.data()), m.N, m.K);
    if (m.quantized) {   // a few rows at a time, each slice's own columns into a buffer in cache
      return slices(m.N, [&](int n0, int n1) {
        std::unique_ptr<float[]> panel(new float[std::size_t(kPanelRows) * m.K]);
        for (int r0 = n0; r0 < n1; r0 += kPanelRows) {
          const int r1 = std::min(n1, r0 + kPanelRows);
          to_f32_transposed(src, m.K, m.N, panel.get(), r0, r1);
          finish_rows(m, panel.get(), r0, r1 - r0);
        }
      });
    }
    std::unique_ptr<float[]> copy(new float[static_cast<std::size_t>(src.numel)]);
    slices(m.N, [&](int n0, int n1) { to_f32_transposed(src, m.K, m.N, copy.get() + std::size_t(n0) * m.K, n0, n1); });
    return finish(copy.get(), 0, m.N);
  }
  if (in_place) return finish(reinterpret_cast<const float*>(src.bytes.data()), 0, m.N);
  const int chunk = chunk_rows(m.N, m.K);
  std::unique_ptr<float[]> buffer(new float[std::size_t(chunk) * m.K]);
  const std::size_t row_bytes = std::size_t(m.K) * dtype_size(src.dtype);
  for (int n0 = 0; n0 < m.N; n0 += chunk) {
    const int rows = std::min(chunk, m.N - n0);
    slices(rows, [&](int r0, int r1) {
      TensorInfo part = src;
      part.numel = std::int64_t(r1 - r0) * m.K;
      part.bytes = src.bytes.subspan(std::size_t(n0 + r0) * row_bytes, std::size_t(r1 - r0) * row_bytes);
      to_f32(part, buffer.get() + std::size_t(r0) * m.K);
    });
    finish(buffer.get(), n0, rows);
  }
}

// Bytes of the F32 copy convert_matrix makes for this job, given where its source will be.
std::uint64_t matrix_copy_bytes(const TensorJob& job, bool source_in_place) {
  if (!job.matrix) return 0;
  const MatrixJob& m = *job.matrix;
  const bool in_place = job.to_rows || source_in_place;   // rows: F32, 64-aligned
  if (m.transpose && m.quantized) return 4 * std::uint64_t(kPanelRows) * m.K * std::uint64_t(num_threads());
  if (m.transpose) return in_place ? 0 : 4 * std::uint64_t(job.tensor->numel);
  return in_place ? 0 : 4 * std::uint64_t(chunk_rows(m.N, m.K)) * std::uint64_t(m.K);
}

WeightPlan plan(const ModelConfig& config, const SafeTensors& file, Quantization quantize, WeightSource source,
                LoadFootprint* count) {
  WeightPlan p;
  p.weights.file = file;
  Loader load(p.weights.file, p.weights, source, count);
  load_all(config, load, quantize, p.weights);
  p.jobs = load.jobs_in_file_order();
  return p;
}

}   // namespace

std::uint64_t tensor_bytes(const TensorInfo& t) { return std::uint64_t(t.numel) * dtype_size(t.dtype); }

bool streams_into_rows(const TensorJob& job) {
  return job.to_raw_rows || (job.to_rows && job.tensor->dtype == DType::F32);
}

std::byte* rows_bytes(const TensorJob& job) {
  return job.to_raw_rows ? job.raw_rows : reinterpret_cast<std::byte*>(job.rows);
}

std::uint64_t staging_bytes(const std::vector<TensorJob>& jobs) {
  std::uint64_t largest = 0;
  for (const TensorJob& job : jobs)
    if (!job.skipped() && !streams_into_rows(job)) largest = std::max(largest, tensor_bytes(*job.tensor));
  return largest;
}

void convert_tensor(const TensorJob& job, std::span<const std::byte> bytes) {
  TensorInfo src = *job.tensor;
  src.bytes = bytes;
  if (job.to_raw_rows) {   // 16-bit rows: the file's bytes, the matrix made from them
    if (bytes.data() != job.raw_rows) std::memcpy(job.raw_rows, bytes.data(), bytes.size());
    src.bytes = std::span<const std::byte>(job.raw_rows, bytes.size());
  }
  if (job.to_rows) {
    if (bytes.data() != reinterpret_cast<const std::byte*>(job.rows)) to_f32_on_threads(src, job.rows);
    src.dtype = DType::F32;   // the matrix is made from the rows: the same values, already F32
    src.bytes = std::as_bytes(std::span(job.rows, static_cast<std::size_t>(src.numel)));
  }
  if (job.matrix) convert_matrix(*job.matrix, src);
}

WeightPlan plan_weights(const ModelConfig& config, const SafeTensors& file, Quantization quantize,
                        WeightSource source) {
  return plan(config, file, quantize, source, nullptr);
}

ModelWeights load_weights(const ModelConfig& config, const SafeTensors& file, Quantization quantize) {
  WeightPlan p = plan_weights(config, file, quantize, WeightSource::Kept);
  for (const TensorJob& job : p.jobs) {
    if (job.skipped()) continue;
    convert_tensor(job, job.tensor->bytes);
    p.weights.file.drop_pages(*job.tensor);   // the model keeps its own arrays (or reads in place on demand)
  }
  return std::move(p.weights);
}

LoadFootprint load_footprint(const ModelConfig& config, const SafeTensors& file, Quantization quantize,
                             WeightSource source) {
  LoadFootprint footprint;
  const WeightPlan p = plan(config, file, quantize, source, &footprint);
  for (const TensorJob& job : p.jobs) {
    const TensorInfo& t = *job.tensor;
    bool source_in_place;
    if (source == WeightSource::Kept) {
      const std::uint64_t address =
          t.bytes.empty() ? file.data_start(t) + t.offset : reinterpret_cast<std::uintptr_t>(t.bytes.data());
      source_in_place = f32_in_place(t.dtype, address);
    } else {   // gathered in the 64-aligned staging buffer, unless it streams into its rows
      source_in_place = t.dtype == DType::F32;
    }
    footprint.transient = std::max(footprint.transient, matrix_copy_bytes(job, source_in_place));
  }
  if (source == WeightSource::Streamed) footprint.staging = staging_bytes(p.jobs);
  return footprint;
}

void RowTable::row(std::int64_t r, float* out) const {
  const std::byte* p = data + std::size_t(r) * cols * dtype_size(dtype);
  if (dtype == DType::F32) {
    std::memcpy(out, p, sizeof(float) * std::size_t(cols));
    return;
  }
  for (int i = 0; i < cols; ++i) {
    std::uint16_t h;
    std::memcpy(&h, p + 2 * i, 2);
    out[i] = dtype == DType::F16 ? f16_to_f32(h) : bf16_to_f32(h);
  }
}

void use_fused_products(ModelWeights& w) {
  const auto fuse = [](Matrix& m) { m.fused = m.f32 != nullptr; };
  fuse(w.lm_head);
  for (LayerWeights& L : w.layers)
    for (Matrix* m : {&L.qkv_w, &L.q_w, &L.k_w, &L.v_w, &L.proj_w, &L.fc_w, &L.gate_w, &L.fc_proj_w, &L.cross_q_w,
                      &L.cross_kv_w, &L.cross_proj_w})
      fuse(*m);
}

void matrix_row(const Matrix& m, int n, float* out) {
  if (m.f32) {
    for (int k = 0; k < m.K; ++k) out[k] = m.f32[kernels::packed_index(n, k, m.N, m.K)];
    return;
  }
  const kernels::Q8Shape s(m.N, m.K);
  for (int k = 0; k < m.K; ++k)
    out[k] = static_cast<float>(m.q ? kernels::q8_weight(m.q, s, n, k) : kernels::q4_weight(m.q4, s, n, k)) *
             m.d[kernels::q8_scale_index(s, n, k / kernels::kQ8Block)];
}

}   // namespace glassbox
