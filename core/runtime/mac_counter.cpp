// MacCounter: a thread-local at::RecordFunction observer that sizes each counted ATen
// operation from its input shapes (see mac_counter.h for the convention).
#include "core/runtime/mac_counter.h"

#include <ATen/ATen.h>
#include <ATen/record_function.h>

#include <algorithm>
#include <cstring>
#include <memory>

namespace attnlab::runtime {
namespace {

enum class OpKind { None, Linear, Product, Conv, Norm };

struct CounterState {
  bool active = false;
  int depth = 0;                 // counted operations currently open
  int layer_depth = 0;           // layer scopes currently open
  const char* group = nullptr;   // MacGroupScope label
  std::vector<MacLayer> layers;  // one per outermost layer scope
  MacLayer rest;                 // everything outside layer scopes
  at::CallbackHandle handle = 0;
};

thread_local CounterState state;

OpKind kind_of(const char* name) {
  static const std::pair<const char*, OpKind> kinds[] = {{"aten::linear", OpKind::Linear},
                                                         {"aten::addmm", OpKind::Product},
                                                         {"aten::mm", OpKind::Product},
                                                         {"aten::bmm", OpKind::Product},
                                                         {"aten::baddbmm", OpKind::Product},
                                                         {"aten::matmul", OpKind::Product},
                                                         {"aten::einsum", OpKind::Product},
                                                         {"aten::conv1d", OpKind::Conv},
                                                         {"aten::conv2d", OpKind::Conv},
                                                         {"aten::convolution", OpKind::Conv},
                                                         {"aten::_convolution", OpKind::Conv},
                                                         {"aten::layer_norm", OpKind::Norm},
                                                         {"aten::batch_norm", OpKind::Norm},
                                                         {"aten::group_norm", OpKind::Norm},
                                                         {"aten::native_layer_norm", OpKind::Norm}};
  for (const auto& [n, k] : kinds)
    if (std::strcmp(n, name) == 0) return k;
  return OpKind::None;
}

std::vector<int64_t> shape(const c10::IValue& v) {
  return v.isTensor() ? v.toTensor().sizes().vec() : std::vector<int64_t>{};
}

int64_t product(const std::vector<int64_t>& s, size_t from = 0, size_t to = SIZE_MAX) {
  const size_t end = std::min(to, s.size());
  int64_t p = 1;
  for (size_t i = from; i < end; ++i) p *= s[i];
  return p;
}

// a (..., n, k) times b (..., k, m), batch dims broadcast; 1-D operands as torch.matmul.
int64_t matmul_macs(std::vector<int64_t> a, std::vector<int64_t> b) {
  if (a.empty() || b.empty()) return 0;
  if (a.size() == 1) a.insert(a.begin(), 1);
  if (b.size() == 1) b.push_back(1);
  const int64_t n = a[a.size() - 2], k = a.back(), m = b.back();
  std::vector<int64_t> batch_a(a.begin(), a.end() - 2), batch_b(b.begin(), b.end() - 2);
  const size_t rank = std::max(batch_a.size(), batch_b.size());
  int64_t batch = 1;
  for (size_t i = 0; i < rank; ++i) {
    const int64_t x = i < rank - batch_a.size() ? 1 : batch_a[i - (rank - batch_a.size())];
    const int64_t y = i < rank - batch_b.size() ? 1 : batch_b[i - (rank - batch_b.size())];
    batch *= std::max(x, y);
  }
  return batch * n * k * m;
}

// A two-operand einsum multiplies once per combination of all its indices.
int64_t einsum_macs(const c10::IValue& equation, const c10::IValue& operands) {
  if (!equation.isString() || !operands.isTensorList()) return 0;
  const std::string eq = equation.toStringRef();
  const auto tensors = operands.toTensorList();
  if (tensors.size() < 2) return 0;
  std::map<char, int64_t> sizes;
  const std::string inputs = eq.substr(0, eq.find("->"));
  size_t t = 0, axis = 0;
  for (const char c : inputs) {
    if (c == ',') {
      ++t, axis = 0;
    } else if (c != ' ' && t < tensors.size()) {
      const at::Tensor x = tensors.get(t);
      if (axis < static_cast<size_t>(x.dim())) sizes[c] = x.size(static_cast<int64_t>(axis));
      ++axis;
    }
  }
  int64_t macs = 1;
  for (const auto& [c, n] : sizes) macs *= n;
  return macs;
}

int64_t conv_macs(const c10::ArrayRef<const c10::IValue>& in) {
  if (in.size() < 2) return 0;
  const auto x = shape(in[0]), w = shape(in[1]);
  if (x.size() < 3 || w.size() != x.size()) return 0;
  // conv2d / conv1d: (input, weight, bias, stride, padding, dilation, groups);
  // convolution / _convolution: (..., dilation, transposed, output_padding, groups, ...).
  const size_t spatial = x.size() - 2;
  const auto ints = [&](size_t i, int64_t fallback) {
    std::vector<int64_t> v(spatial, fallback);
    if (i < in.size() && in[i].isIntList()) {
      const auto list = in[i].toIntVector();
      for (size_t d = 0; d < spatial; ++d) v[d] = list.size() == 1 ? list[0] : list[d];
    }
    return v;
  };
  const auto stride = ints(3, 1), dilation = ints(5, 1);
  std::vector<int64_t> padding = ints(4, 0);
  const bool same = in.size() > 4 && in[4].isString() && in[4].toStringRef() == "same";
  int64_t out = x[0] * w[0];
  for (size_t d = 0; d < spatial; ++d) {
    const int64_t size = x[2 + d], k = w[2 + d];
    out *= same ? (size + stride[d] - 1) / stride[d]
                : (size + 2 * padding[d] - dilation[d] * (k - 1) - 1) / stride[d] + 1;
  }
  return out * product(w, 1);  // (C_in / groups) · kernel taps per output element
}

int64_t op_macs(OpKind kind, const at::RecordFunction& fn) {
  const auto in = fn.inputs();
  switch (kind) {
    case OpKind::Linear: {
      if (in.size() < 2) return 0;
      const auto x = shape(in[0]), w = shape(in[1]);
      return w.size() == 2 ? product(x) * w[0] : 0;
    }
    case OpKind::Product: {
      const std::string name = fn.name();
      if (name == "aten::einsum") return in.size() >= 2 ? einsum_macs(in[0], in[1]) : 0;
      const size_t first = name == "aten::addmm" || name == "aten::baddbmm" ? 1 : 0;
      return in.size() >= first + 2 ? matmul_macs(shape(in[first]), shape(in[first + 1])) : 0;
    }
    case OpKind::Conv:
      return conv_macs(in);
    case OpKind::Norm:
      return in.empty() ? 0 : product(shape(in[0]));
    case OpKind::None:
      break;
  }
  return 0;
}

const char* group_of(OpKind kind) {
  switch (kind) {
    case OpKind::Linear:
      return "projections";
    case OpKind::Conv:
      return "convs";
    case OpKind::Norm:
      return "norms";
    default:
      return state.group ? state.group : "aggregation";
  }
}

// A marker that the operation was counted, so its end closes the depth it opened.
struct CountedOp : at::ObserverContext {};

std::unique_ptr<at::ObserverContext> on_start(const at::RecordFunction& fn) {
  const OpKind kind = kind_of(fn.name());
  if (kind == OpKind::None) return nullptr;
  if (state.depth++ == 0) {
    MacLayer& layer =
        state.layer_depth > 0 && !state.layers.empty() ? state.layers.back() : state.rest;
    layer.macs[group_of(kind)] += op_macs(kind, fn);
  }
  return std::make_unique<CountedOp>();
}

void on_end(const at::RecordFunction&, at::ObserverContext* ctx) {
  if (ctx) --state.depth;
}

}  // namespace

int64_t MacLayer::total() const {
  int64_t sum = 0;
  for (const auto& [group, n] : macs) sum += n;
  return sum;
}

MacCounter::MacCounter() {
  state = CounterState{};
  state.active = true;
  state.handle =
      at::addThreadLocalCallback(at::RecordFunctionCallback(on_start, on_end).needsInputs(true));
}

MacCounter::~MacCounter() {
  at::removeCallback(state.handle);
  state.active = false;
}

std::vector<MacLayer> MacCounter::layers() const {
  std::vector<MacLayer> out = state.layers;
  if (!state.rest.macs.empty()) out.push_back(state.rest);
  return out;
}

bool counting_macs() {
  return state.active;
}

MacLayerScope::MacLayerScope(const std::string& name, int64_t params) {
  if (!state.active) return;
  active_ = true;
  if (state.layer_depth++ == 0) state.layers.push_back(MacLayer{name, params, {}});
}

MacLayerScope::~MacLayerScope() {
  if (active_) --state.layer_depth;
}

MacGroupScope::MacGroupScope(const char* group) : previous_(state.group) {
  state.group = group;
}

MacGroupScope::~MacGroupScope() {
  state.group = previous_;
}

}  // namespace attnlab::runtime
