// The mechanism registry: one line per mechanism in ATTNLAB_MECHANISMS below; each name
// refers to `MechanismInfo <name>_mechanism()` defined in core/attention/<name>.cpp.
#include "core/attention/registry.h"
#include "core/io/text.h"

#include <cmath>

// clang-format off
#define ATTNLAB_MECHANISMS(X) \
  X(softmax)               \
  X(softmax_rope)          \
  X(linear)                \
  X(castling)              \
  X(rala)                  \
  X(hilo)                  \
  X(anchor)                \
  X(hydra)                 \
  X(sra)                   \
  X(efficient)             \
  X(xca)                   \
  X(swin)                  \
  X(efficientvit)          \
  X(flatten)               \
  X(mlla)                  \
  X(agent)                 \
  X(agent_pvt)             \
  X(biformer)              \
  X(dat)                   \
  X(pola)                  \
  X(inline)                \
  /* one line per mechanism, each ending in a backslash, above this line */
// clang-format on

namespace attnlab::attention {

#define ATTNLAB_DECLARE(name) MechanismInfo name##_mechanism();
ATTNLAB_MECHANISMS(ATTNLAB_DECLARE)
#undef ATTNLAB_DECLARE

const std::vector<MechanismInfo>& mechanisms() {
#define ATTNLAB_ENTRY(name) name##_mechanism(),
  static const std::vector<MechanismInfo> all{ATTNLAB_MECHANISMS(ATTNLAB_ENTRY)};
#undef ATTNLAB_ENTRY
  return all;
}

std::vector<std::string> mechanism_names() {
  std::vector<std::string> names;
  for (const auto& m : mechanisms()) names.push_back(m.name);
  return names;
}

const MechanismInfo* find_mechanism(const std::string& name) {
  for (const auto& m : mechanisms())
    if (m.name == name) return &m;
  return nullptr;
}

const MechanismInfo& mechanism_info(const std::string& name) {
  if (const MechanismInfo* m = find_mechanism(name)) return *m;
  throw AttentionError("unknown attention mechanism '" + name +
                       "' (known: " + text::join(mechanism_names()) + ")");
}

double score_elements(const MechanismInfo& info, const MechanismConfig& config,
                      const TokenLayout& layout) {
  if (info.score_elements) return info.score_elements(config, layout);
  if (info.linear_in_tokens) return 0.0;
  const double n = static_cast<double>(layout.tokens());
  return static_cast<double>(config.heads) * n * n;
}

namespace {

void check_option(const MechanismInfo& info, const OptionSpec& spec, double value) {
  const std::string what = info.name + " option '" + spec.name + "' = " + std::to_string(value);
  if (!std::isfinite(value)) throw AttentionError(what + " is not finite");
  if (spec.kind == OptionSpec::Kind::Choice && (value != std::round(value) || value < 0 ||
                                                value >= static_cast<double>(spec.choices.size())))
    throw AttentionError(what + " is not one of " + text::join(spec.choices));
  if (spec.kind != OptionSpec::Kind::Real && value != std::round(value))
    throw AttentionError(what + " must be " +
                         (spec.kind == OptionSpec::Kind::Flag ? "0 or 1" : "an integer"));
  if (value < spec.min || value > spec.max)
    throw AttentionError(what + " is outside [" + std::to_string(spec.min) + ", " +
                         std::to_string(spec.max) + "]");
}

}  // namespace

double option_from_text(const MechanismInfo& info, const std::string& option,
                        const std::string& value) {
  for (const auto& spec : info.options) {
    if (spec.name != option) continue;
    if (spec.kind == OptionSpec::Kind::Choice) {
      for (size_t i = 0; i < spec.choices.size(); ++i)
        if (spec.choices[i] == value) return static_cast<double>(i);
      throw AttentionError(info.name + " option '" + option + "' = '" + value + "' is not one of " +
                           text::join(spec.choices));
    }
    if (value == "true" || value == "false") return value == "true" ? 1.0 : 0.0;
    size_t used = 0;
    double number = 0.0;
    try {
      number = std::stod(value, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != value.size())
      throw AttentionError(info.name + " option '" + option + "' wants a number, got '" + value +
                           "'");
    return number;
  }
  throw AttentionError(info.name + " has no option '" + option + "'");
}

std::string option_text(const OptionSpec& spec, double value) {
  // The index is made only once the value is known to be one: converting a negative
  // value (HiLo's lofi_heads -1) to size_t is undefined (found by UBSan).
  if (spec.kind == OptionSpec::Kind::Choice && value >= 0 &&
      value < static_cast<double>(spec.choices.size()))
    return spec.choices[static_cast<size_t>(value)];
  return text::format_g(value);
}

std::shared_ptr<AttentionMechanism> make_mechanism(const std::string& name,
                                                   MechanismConfig config) {
  const MechanismInfo& info = mechanism_info(name);
  for (const auto& [key, value] : config.options) {
    const OptionSpec* spec = nullptr;
    for (const auto& s : info.options)
      if (s.name == key) spec = &s;
    if (!spec) {
      std::vector<std::string> accepted;
      for (const auto& s : info.options) accepted.push_back(s.name);
      throw AttentionError(name + " has no option '" + key + "' (it accepts: " +
                           (accepted.empty() ? "none" : text::join(accepted)) + ")");
    }
    check_option(info, *spec, value);
  }
  for (const auto& s : info.options) config.options.emplace(s.name, s.default_value);
  return info.create(config);
}

}  // namespace attnlab::attention
