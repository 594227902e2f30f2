// The regex engine of regex.h: a parser to a small syntax tree, a compiler to instructions of a
// backtracking machine (as in Pike and Thompson's notes, the backtracking variant), and the
// machine. Text is decoded to code points once per find_all.
#include "tokenizer/regex.h"

#include <array>
#include <bitset>
#include <limits>

#include "glassbox/quoted.h"
#include "tokenizer/unicode.h"

namespace glassbox {
namespace {

constexpr int kUnbounded = std::numeric_limits<int>::max();

// A set of code points: ranges and Unicode properties, each possibly negated (\S, \P{L}), the
// whole possibly negated ([^...]). ASCII is looked up in a bitmap made once.
struct CharSet {
  enum class Kind { Range, Letter, Number, Space };
  struct Item {
    Kind kind;
    bool negated;
    char32_t first, last;
  };
  std::vector<Item> items;
  bool negated = false;
  std::bitset<128> ascii;

  bool slow_contains(char32_t cp) const {
    bool in = false;
    for (const Item& item : items) {
      bool hit = false;
      switch (item.kind) {
        case Kind::Range:
          hit = cp >= item.first && cp <= item.last;
          break;
        case Kind::Letter:
          hit = unicode::is_letter(cp);
          break;
        case Kind::Number:
          hit = unicode::is_number(cp);
          break;
        case Kind::Space:
          hit = unicode::is_whitespace(cp);
          break;
      }
      if (hit != item.negated) {
        in = true;
        break;
      }
    }
    return in != negated;
  }
  void finish() {
    for (char32_t c = 0; c < 128; ++c) ascii[c] = slow_contains(c);
  }
  bool contains(char32_t cp) const { return cp < 128 ? ascii[cp] : slow_contains(cp); }
};

struct Node {
  enum class Kind { Set, Concat, Alt, Repeat, Look, Empty };
  Node() = default;
  explicit Node(Kind k) : kind(k) {}
  Kind kind = Kind::Empty;
  int set = -1;                 // Set: index into the program's sets
  std::vector<Node> children;   // Concat, Alt; Repeat and Look: one
  int min = 0, max = 0;         // Repeat
  bool negative = false;        // Look: (?!...) rather than (?=...)
};

bool nullable(const Node& n) {
  switch (n.kind) {
    case Node::Kind::Set:
      return false;
    case Node::Kind::Concat:
      for (const Node& c : n.children)
        if (!nullable(c)) return false;
      return true;
    case Node::Kind::Alt:
      for (const Node& c : n.children)
        if (nullable(c)) return true;
      return false;
    case Node::Kind::Repeat:
      return n.min == 0 || nullable(n.children[0]);
    case Node::Kind::Look:
    case Node::Kind::Empty:
      return true;
  }
  return true;
}

}   // namespace

struct Regex::Program {
  enum class Op : std::uint8_t { Set, Split, Jmp, Look, Match };
  struct Inst {
    Op op;
    bool negative = false;   // Look
    int a = 0, b = 0;        // Set: set; Split: first, second; Jmp: target; Look: body, next
  };
  std::vector<Inst> code;
  std::vector<CharSet> sets;

  // Runs from pc at cps[pos]; on reaching Match, its position in `end`. `stack` holds the
  // alternatives still to try, above what callers (an enclosing look-ahead) left on it; it is
  // reused across calls so that a match allocates nothing.
  using Stack = std::vector<std::pair<int, std::size_t>>;
  // `steps` counts the instructions run; past `budget`, run gives up (returns false, steps > budget).
  bool run(int pc0, std::size_t pos0, const std::vector<char32_t>& cps, std::size_t& end, Stack& stack,
           std::size_t& steps, std::size_t budget) const {
    const std::size_t base = stack.size();
    stack.emplace_back(pc0, pos0);
    while (stack.size() > base) {
      auto [pc, pos] = stack.back();
      stack.pop_back();
      for (bool alive = true; alive;) {
        if (++steps > budget) {
          stack.resize(base);
          return false;
        }
        const Inst& in = code[pc];
        switch (in.op) {
          case Op::Set:
            if (pos < cps.size() && sets[in.a].contains(cps[pos])) {
              ++pc;
              ++pos;
            } else {
              alive = false;
            }
            break;
          case Op::Split:
            stack.emplace_back(in.b, pos);
            pc = in.a;
            break;
          case Op::Jmp:
            pc = in.a;
            break;
          case Op::Look: {
            std::size_t ignored;
            const bool found = run(in.a, pos, cps, ignored, stack, steps, budget);
            if (steps > budget) {
              stack.resize(base);
              return false;
            }
            if (found != in.negative)
              pc = in.b;
            else
              alive = false;
            break;
          }
          case Op::Match:
            end = pos;
            return true;
        }
      }
    }
    return false;
  }
};

namespace {

// Recursive descent over the pattern's code points.
class Parser {
 public:
  Parser(std::string_view pattern, std::vector<CharSet>& sets) : pattern_(pattern), sets_(sets) {
    for (std::size_t pos = 0; pos < pattern.size();) {
      const auto [cp, length] = unicode::decode_utf8(pattern, pos);
      if (length == 0) fail("is not valid UTF-8");
      cps_.push_back(cp);
      pos += static_cast<std::size_t>(length);
    }
  }

  Node parse() {
    Node n = alternation();
    if (at_ < cps_.size()) fail("has an unmatched ')'");
    return n;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw RegexError("regex \"" + std::string(pattern_) + "\" " + what);
  }
  [[noreturn]] void unsupported(const std::string& what) const {
    fail("uses " + what + ", which the regex engine does not support");
  }
  bool more() const { return at_ < cps_.size(); }
  char32_t peek() const { return cps_[at_]; }
  bool eat(char32_t c) {
    if (more() && peek() == c) return ++at_, true;
    return false;
  }

  Node alternation() {
    Node alt{Node::Kind::Alt};
    alt.children.push_back(concatenation());
    while (eat(U'|')) alt.children.push_back(concatenation());
    return alt.children.size() == 1 ? std::move(alt.children[0]) : alt;
  }

  Node concatenation() {
    Node cat{Node::Kind::Concat};
    while (more() && peek() != U'|' && peek() != U')') cat.children.push_back(quantified());
    if (cat.children.empty()) return Node{Node::Kind::Empty};
    return cat.children.size() == 1 ? std::move(cat.children[0]) : cat;
  }

  Node quantified() {
    Node atom_node = atom();
    for (int stacked = 0;; ++stacked) {
      if (stacked > kMaxDepth) fail("stacks more than " + std::to_string(kMaxDepth) + " quantifiers");
      int min, max;
      if (eat(U'*')) {
        min = 0, max = kUnbounded;
      } else if (eat(U'+')) {
        min = 1, max = kUnbounded;
      } else if (eat(U'?')) {
        min = 0, max = 1;
      } else if (more() && peek() == U'{') {
        ++at_;
        min = number();
        max = min;
        if (eat(U',')) max = more() && peek() == U'}' ? kUnbounded : number();
        if (!eat(U'}') || max < min) fail("has a malformed {m,n} quantifier");
      } else {
        return atom_node;
      }
      if (more() && (peek() == U'?' || peek() == U'+')) unsupported("a lazy or possessive quantifier");
      if (atom_node.kind == Node::Kind::Look) fail("repeats a look-ahead");
      if (max == kUnbounded && nullable(atom_node)) unsupported("a repeated sub-pattern that can match empty");
      Node rep{Node::Kind::Repeat};
      rep.min = min;
      rep.max = max;
      rep.children.push_back(std::move(atom_node));
      atom_node = std::move(rep);
    }
  }

  int number() {
    int n = 0;
    bool any = false;
    while (more() && peek() >= U'0' && peek() <= U'9') {
      n = n * 10 + static_cast<int>(peek() - U'0');
      if (n > 1000) fail("has a repetition count above 1000");
      ++at_;
      any = true;
    }
    if (!any) fail("has a malformed {m,n} quantifier");
    return n;
  }

  Node atom() {
    const char32_t c = cps_[at_++];
    switch (c) {
      case U'(':
        return group();
      case U'[':
        return set_node(bracket());
      case U'.': {
        CharSet s;
        s.negated = true;
        s.items.push_back({CharSet::Kind::Range, false, U'\n', U'\n'});
        return set_node(std::move(s));
      }
      case U'\\': {
        CharSet s;
        escape(s);
        return set_node(std::move(s));
      }
      case U'^':
      case U'$':
        unsupported("an anchor (^ or $)");
      case U'*':
      case U'+':
      case U'?':
      case U'{':
        fail("has a quantifier with nothing to repeat");
      default:
        return set_node(literal(c));
    }
  }

  Node group() {
    // The parser and the compiler recurse once per level: a hostile file's deep nesting must be
    // an error, not a stack overflow.
    if (++depth_ > kMaxDepth) fail("nests groups more than " + std::to_string(kMaxDepth) + " deep");
    const bool saved = ignore_case_;
    Node inner;
    if (eat(U'?')) {
      if (eat(U':')) {
        inner = alternation();
      } else if (more() && (peek() == U'=' || peek() == U'!')) {
        const bool negative = cps_[at_++] == U'!';
        inner = Node{Node::Kind::Look};
        inner.negative = negative;
        inner.children.push_back(alternation());
      } else if (eat(U'i') && eat(U':')) {
        ignore_case_ = true;
        inner = alternation();
      } else {
        unsupported("a group kind other than (?:...), (?i:...), (?=...), (?!...)");
      }
    } else {
      inner = alternation();   // capturing or not makes no difference to a split
    }
    ignore_case_ = saved;
    if (!eat(U')')) fail("has an unclosed '('");
    --depth_;
    return inner;
  }

  // One character (with its case partners in (?i:...)).
  CharSet literal(char32_t c) const {
    CharSet s;
    s.items.push_back({CharSet::Kind::Range, false, c, c});
    if (ignore_case_) add_case_partners(s, c);
    return s;
  }

  static void add_case_partners(CharSet& s, char32_t c) {
    const auto add = [&](char32_t p) { s.items.push_back({CharSet::Kind::Range, false, p, p}); };
    if (c >= U'a' && c <= U'z') add(c - 32);
    if (c >= U'A' && c <= U'Z') add(c + 32);
    // The two non-ASCII characters whose simple case folding is an ASCII letter.
    if (c == U's' || c == U'S') add(0x017F);
    if (c == U'k' || c == U'K') add(0x212A);
    if (c > 0x7F && c != 0x017F && c != 0x212A && (unicode::is_letter(c)))
      throw RegexError("case-insensitive matching of non-ASCII letters is not supported");
  }

  // After a backslash, inside or outside brackets: adds what it stands for to `s`.
  void escape(CharSet& s) {
    if (!more()) fail("ends with a lone backslash");
    const char32_t c = cps_[at_++];
    const auto single = [&](char32_t cp) {
      s.items.push_back({CharSet::Kind::Range, false, cp, cp});
      if (ignore_case_) add_case_partners(s, cp);
    };
    switch (c) {
      case U'r':
        return single(U'\r');
      case U'n':
        return single(U'\n');
      case U't':
        return single(U'\t');
      case U'f':
        return single(U'\f');
      case U'v':
        return single(U'\v');
      case U's':
        s.items.push_back({CharSet::Kind::Space, false, 0, 0});
        return;
      case U'S':
        s.items.push_back({CharSet::Kind::Space, true, 0, 0});
        return;
      case U'p':
      case U'P': {
        const bool negated = c == U'P';
        std::u32string name;
        if (!eat(U'{')) fail("has \\p without {...}");
        while (more() && peek() != U'}') name += cps_[at_++];
        if (!eat(U'}')) fail("has an unclosed \\p{");
        if (name == U"L" || name == U"Letter")
          s.items.push_back({CharSet::Kind::Letter, negated, 0, 0});
        else if (name == U"N" || name == U"Number")
          s.items.push_back({CharSet::Kind::Number, negated, 0, 0});
        else
          unsupported("a Unicode class other than \\p{L} and \\p{N}");
        return;
      }
      default:
        if (c < 0x80 && !((c >= U'0' && c <= U'9') || (c >= U'a' && c <= U'z') || (c >= U'A' && c <= U'Z')))
          return single(c);   // escaped punctuation stands for itself
        unsupported(std::string("the escape \\") + static_cast<char>(c < 0x80 ? c : U'?'));
    }
  }

  CharSet bracket() {
    CharSet s;
    if (eat(U'^')) s.negated = true;
    bool first = true;
    while (more() && (peek() != U']' || first)) {
      first = false;
      if (eat(U'[')) unsupported("a nested character class");
      if (eat(U'\\')) {
        const std::size_t before = s.items.size();
        escape(s);
        // A single escaped character may start a range (e.g. [\x00-\x1f] written as [\t-\r]).
        if (s.items.size() == before + 1 && s.items.back().kind == CharSet::Kind::Range && !ignore_case_) range_tail(s);
        continue;
      }
      const char32_t c = cps_[at_++];
      s.items.push_back({CharSet::Kind::Range, false, c, c});
      if (ignore_case_) add_case_partners(s, c);
      if (!ignore_case_) range_tail(s);
    }
    if (!eat(U']')) fail("has an unclosed '['");
    return s;
  }

  // After a class's single character: "-x" makes it a range.
  void range_tail(CharSet& s) {
    if (at_ + 1 >= cps_.size() || peek() != U'-' || cps_[at_ + 1] == U']') return;
    ++at_;
    char32_t last = cps_[at_++];
    if (last == U'\\') {
      CharSet tmp;
      escape(tmp);
      if (tmp.items.size() != 1 || tmp.items[0].kind != CharSet::Kind::Range) fail("has a range ending in a class");
      last = tmp.items[0].first;
    }
    if (last < s.items.back().first) fail("has a range out of order");
    s.items.back().last = last;
  }

  Node set_node(CharSet s) {
    s.finish();
    sets_.push_back(std::move(s));
    Node n{Node::Kind::Set};
    n.set = static_cast<int>(sets_.size()) - 1;
    return n;
  }

  std::string_view pattern_;
  std::vector<char32_t> cps_;
  std::size_t at_ = 0;
  bool ignore_case_ = false;
  int depth_ = 0;
  static constexpr int kMaxDepth = 100;
  std::vector<CharSet>& sets_;
};

}   // namespace

namespace {

// Emits the instructions of `n` at the end of `code`.
// Counted repetition copies its body, so nested counts multiply: a bound on the program keeps a
// pattern such as ((a{1000}){1000}){1000} from exhausting memory.
constexpr std::size_t kMaxInstructions = 1 << 20;

void emit(const Node& n, std::vector<Regex::Program::Inst>& code) {
  using P = Regex::Program;
  const auto here = [&] { return static_cast<int>(code.size()); };
  if (code.size() > kMaxInstructions)
    throw RegexError("compiles to more than 2^20 instructions (repetition counts multiply)");
  switch (n.kind) {
    case Node::Kind::Empty:
      return;
    case Node::Kind::Set:
      code.push_back({P::Op::Set, false, n.set, 0});
      return;
    case Node::Kind::Concat:
      for (const Node& c : n.children) emit(c, code);
      return;
    case Node::Kind::Alt: {
      // Split(L1, next) L1: first; Jmp end; next: Split(L2, ...) ... last alternative.
      std::vector<int> jumps;
      for (std::size_t i = 0; i < n.children.size(); ++i) {
        if (i + 1 < n.children.size()) {
          const int split = here();
          code.push_back({P::Op::Split, false, split + 1, 0});
          emit(n.children[i], code);
          jumps.push_back(here());
          code.push_back({P::Op::Jmp, false, 0, 0});
          code[split].b = here();
        } else {
          emit(n.children[i], code);
        }
      }
      for (int j : jumps) code[j].a = here();
      return;
    }
    case Node::Kind::Repeat: {
      const Node& body = n.children[0];
      for (int i = 0; i < n.min; ++i) emit(body, code);
      if (n.max == kUnbounded) {
        const int loop = here();
        code.push_back({P::Op::Split, false, loop + 1, 0});
        emit(body, code);
        code.push_back({P::Op::Jmp, false, loop, 0});
        code[loop].b = here();
        return;
      }
      // Optional copies, greedy: each Split tries one more copy first, else leaves.
      std::vector<int> splits;
      for (int i = n.min; i < n.max; ++i) {
        splits.push_back(here());
        code.push_back({P::Op::Split, false, here() + 1, 0});
        emit(body, code);
      }
      for (int s : splits) code[s].b = here();
      return;
    }
    case Node::Kind::Look: {
      // Look(body, next); body...; Match; next:
      const int look = here();
      code.push_back({P::Op::Look, n.negative, look + 1, 0});
      emit(n.children[0], code);
      code.push_back({P::Op::Match});
      code[look].b = here();
      return;
    }
  }
}

}   // namespace

Regex::Regex(std::string_view pattern) : program_(std::make_unique<Program>()), pattern_(pattern) {
  const Node root = Parser(pattern, program_->sets).parse();
  emit(root, program_->code);
  program_->code.push_back({Program::Op::Match});
}

Regex::Regex(Regex&&) noexcept = default;
Regex& Regex::operator=(Regex&&) noexcept = default;
Regex::~Regex() = default;

std::vector<Regex::Match> Regex::find_all(std::string_view text) const {
  // Code points and the byte offset of each (one more offset for the end).
  std::vector<char32_t> cps;
  std::vector<std::size_t> offsets;
  cps.reserve(text.size());
  offsets.reserve(text.size() + 1);
  for (std::size_t pos = 0; pos < text.size();) {
    const auto [cp, length] = unicode::decode_utf8(text, pos);
    cps.push_back(cp);
    offsets.push_back(pos);
    pos += static_cast<std::size_t>(length > 0 ? length : 1);
  }
  offsets.push_back(text.size());

  std::vector<Match> matches;
  Program::Stack stack;
  const std::size_t budget = kStepBudget + kStepsPerCharacter * cps.size();
  std::size_t steps = 0;
  for (std::size_t at = 0; at < cps.size();) {
    std::size_t end;
    const bool found = program_->run(0, at, cps, end, stack, steps, budget);
    if (steps > budget)
      throw RegexError("regex " + quote_text(pattern_) + " needs more than " + std::to_string(budget) + " steps on a " +
                       std::to_string(text.size()) + "-byte piece (gave up at byte " + std::to_string(offsets[at]) +
                       ")");
    if (found && end > at) {
      matches.push_back({offsets[at], offsets[end]});
      at = end;
    } else {
      ++at;
    }
  }
  return matches;
}

std::string replace_matches(const Regex* regex, const std::string& literal, const std::string& content,
                            const std::string& text) {
  std::vector<Regex::Match> matches;
  if (regex) {
    matches = regex->find_all(text);
  } else {
    for (std::size_t pos = text.find(literal); pos != std::string::npos; pos = text.find(literal, pos + literal.size()))
      matches.push_back({pos, pos + literal.size()});
  }
  if (matches.empty()) return text;
  std::string out;
  std::size_t prev = 0;
  for (const auto& m : matches) {
    out.append(text, prev, m.start - prev);
    out += content;
    prev = m.end;
  }
  out.append(text, prev);
  return out;
}

}   // namespace glassbox
