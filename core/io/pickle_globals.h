// Which globals a pickle may name. Kept apart from the opcode interpreter so the policy
// can be read (and reviewed) in one place.
#pragma once

#include <optional>
#include <string>

#include "core/io/dtype.h"

namespace attnlab::io::pickle {

// True for module/name pairs that exist to run code or reach the system (os.system,
// subprocess.Popen, builtins.eval, ...). A checkpoint that names one is refused whole.
bool is_refused_global(const std::string& module, const std::string& name);

// "torch.FloatStorage" -> F32, ...; nullopt for anything else.
std::optional<DType> storage_dtype(const std::string& qualified_name);

}  // namespace attnlab::io::pickle
