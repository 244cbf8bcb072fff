#include "fuzz/shrink.hpp"

#include <algorithm>

namespace kiln::fuzz {
namespace {

// Every use of value `from` (by later ops and as an output) reads `to` instead.
Program replace_uses(Program p, int from, int to) {
  for (auto& op : p.ops)
    for (auto& a : op.args)
      if (a.value == from) a.value = to;
  for (int& o : p.outputs)
    if (o == from) o = to;
  return p;
}

void output_variants(const Program& p, std::vector<Program>& out) {
  if (p.outputs.size() > 1)
    for (size_t i = 0; i < p.outputs.size(); ++i) {
      Program q = p;
      q.outputs = {p.outputs[i]};
      out.push_back(q);
      q.outputs = p.outputs;
      q.outputs.erase(q.outputs.begin() + static_cast<std::ptrdiff_t>(i));
      out.push_back(q);
    }
  // The earliest value that still fails is the shortest program.
  for (int v = static_cast<int>(p.inputs.size()); v < p.value_count(); ++v) {
    Program q = p;
    q.outputs = {v};
    out.push_back(q);
  }
}

void op_variants(const Program& p, std::vector<Program>& out) {
  const int ni = static_cast<int>(p.inputs.size());
  for (size_t j = 0; j < p.ops.size(); ++j) {
    const Op& op = p.ops[j];
    for (size_t k = 0; k < op.args.size(); ++k) {
      if (op.args[k].is_scalar()) continue;
      out.push_back(replace_uses(p, ni + static_cast<int>(j), op.args[k].value));
      bool may_be_scalar = (op.kind == OpKind::Binary && !op.args[1 - k].is_scalar()) ||
                           ((op.kind == OpKind::Where || op.kind == OpKind::Clip) && k > 0);
      if (!may_be_scalar) continue;
      Program q = p;
      q.ops[j].args[k] = Operand{-1, Scalar(1)};
      out.push_back(q);
    }
  }
}

// Simpler arguments of one op: fewer axes, no keepdims, fewer index entries, whole slices,
// default FFT lengths, axes and norm.
void argument_variants(const Program& p, std::vector<Program>& out) {
  for (size_t j = 0; j < p.ops.size(); ++j) {
    const Op& op = p.ops[j];
    auto edit = [&](auto&& change) {
      Program q = p;
      change(q.ops[j]);
      out.push_back(q);
    };
    if (op.axes.size() > 1 && op.kind == OpKind::Reduce)
      for (size_t a = 0; a < op.axes.size(); ++a)
        edit([a](Op& o) { o.axes.erase(o.axes.begin() + static_cast<std::ptrdiff_t>(a)); });
    if (op.keepdims) edit([](Op& o) { o.keepdims = false; });
    if (!op.index.empty()) edit([](Op& o) { o.index.pop_back(); });
    for (size_t i = 0; i < op.index.size(); ++i)
      if (std::holds_alternative<Slice>(op.index[i])) {
        const Slice& s = std::get<Slice>(op.index[i]);
        if (s.start || s.stop || s.step != 1) edit([i](Op& o) { o.index[i] = Slice(); });
      }
    if (op.has_lengths) edit([](Op& o) { o.has_lengths = false, o.shape.clear(); });
    if (op.kind == OpKind::Fft && op.has_axes)
      edit([](Op& o) { o.has_axes = false, o.axes.clear(); });
    if (op.norm != 0) edit([](Op& o) { o.norm = 0; });
  }
}

void input_variants(const Program& p, std::vector<Program>& out) {
  for (size_t i = 0; i < p.inputs.size(); ++i) {
    const InputSpec& in = p.inputs[i];
    auto edit = [&](auto&& change) {
      Program q = p;
      change(q.inputs[i]);
      out.push_back(q);
    };
    if (in.kind != DataKind::Small) edit([](InputSpec& s) { s.kind = DataKind::Small; });
    if (!in.shape.empty()) edit([](InputSpec& s) { s.shape.erase(s.shape.begin()); });
    for (size_t d = 0; d < in.shape.size(); ++d) {
      if (in.shape[d] > 1) edit([d](InputSpec& s) { s.shape[d] = 1; });
      if (in.shape[d] > 2) edit([d](InputSpec& s) { s.shape[d] /= 2; });
    }
  }
}

std::vector<Program> variants(const Program& p) {
  std::vector<Program> out;
  output_variants(p, out);
  op_variants(p, out);
  input_variants(p, out);
  argument_variants(p, out);
  return out;
}

}  // namespace

Program compact(const Program& p) {
  const int ni = static_cast<int>(p.inputs.size());
  std::vector<bool> live(static_cast<size_t>(p.value_count()), false);
  for (int o : p.outputs) live.at(static_cast<size_t>(o)) = true;
  for (size_t j = p.ops.size(); j-- > 0;)
    if (live[static_cast<size_t>(ni) + j])
      for (const auto& a : p.ops[j].args)
        if (!a.is_scalar()) live.at(static_cast<size_t>(a.value)) = true;
  Program q;
  std::vector<int> number(live.size(), -1);
  int next = 0;
  for (int v = 0; v < p.value_count(); ++v) {
    if (!live[static_cast<size_t>(v)]) continue;
    number[static_cast<size_t>(v)] = next++;
    if (v < ni) {
      q.inputs.push_back(p.inputs[static_cast<size_t>(v)]);
      continue;
    }
    Op op = p.ops[static_cast<size_t>(v - ni)];
    for (auto& a : op.args)
      if (!a.is_scalar()) a.value = number[static_cast<size_t>(a.value)];
    q.ops.push_back(op);
  }
  for (int o : p.outputs) q.outputs.push_back(number[static_cast<size_t>(o)]);
  return q;
}

int64_t program_weight(const Program& p) {
  int64_t w =
      static_cast<int64_t>(p.ops.size()) * 1000 + static_cast<int64_t>(p.outputs.size()) * 100;
  for (const auto& in : p.inputs)
    w += 50 + 2 * shape_size(in.shape) + static_cast<int64_t>(in.shape.size()) +
         (in.kind != DataKind::Small ? 5 : 0);
  for (const auto& op : p.ops) {
    for (const auto& a : op.args) w += a.is_scalar() ? 1 : 3;
    w += static_cast<int64_t>(op.axes.size() + op.index.size() + op.shape.size()) + op.keepdims +
         op.has_lengths + op.has_axes + (op.norm != 0);
    for (const auto& ix : op.index)
      if (auto* s = std::get_if<Slice>(&ix))
        w += s->start.has_value() + s->stop.has_value() + (s->step != 1);
  }
  return w;
}

Program shrink(const Program& p, const std::function<bool(const Program&)>& still_fails,
               int max_tries) {
  Program best = p;  // not compacted: the failure may need an op that no output reads
  int64_t weight = program_weight(best);
  int tries = 0;
  for (bool progress = true; progress && tries < max_tries;) {
    progress = false;
    for (const Program& v : variants(best)) {
      Program c = compact(v);
      int64_t w = program_weight(c);
      if (w >= weight) continue;
      if (++tries > max_tries) break;
      if (!still_fails(c)) continue;
      best = std::move(c);
      weight = w;
      progress = true;
      break;
    }
  }
  return best;
}

}  // namespace kiln::fuzz
