#include "core/io/pickle_globals.h"

#include <cstring>

namespace attnlab::io::pickle {

namespace {

// Modules whose callables execute code, spawn processes, touch files or sockets, or can
// reach arbitrary attributes (operator.attrgetter/methodcaller). Matched as the whole
// module or a prefix followed by '.'.
constexpr const char* kRefusedModules[] = {
    "os",
    "posix",
    "nt",
    "posixpath",
    "ntpath",
    "subprocess",
    "sys",
    "shutil",
    "socket",
    "importlib",
    "runpy",
    "code",
    "codeop",
    "pty",
    "ctypes",
    "pickle",
    "_pickle",
    "marshal",
    "types",
    "webbrowser",
    "io",
    "_io",
    "tempfile",
    "multiprocessing",
    "signal",
    "threading",
    "_thread",
    "platform",
    "pdb",
    "timeit",
    "commands",
    "popen2",
    "operator",
    "_operator",
    "asyncio",
    "http",
    "urllib",
    "ftplib",
    "smtplib",
    "telnetlib",
    "glob",
    "pathlib",
    "zipimport",
    "torch.hub",
    "torch.jit",
    "torch.ops",
    "torch.utils.cpp_extension",
};

// builtins that only build plain data; every other builtin (eval, exec, open,
// __import__, getattr, ...) is refused.
constexpr const char* kDataBuiltins[] = {
    "set", "frozenset", "slice", "complex", "bytearray", "bytes",  "int",   "float",
    "str", "list",      "tuple", "dict",    "bool",      "object", "range",
};

// torch.jit._pickle's functions that only rebuild plain data.
constexpr const char* kTorchScriptDataBuilders[] = {
    "restore_type_tag", "build_intlist", "build_doublelist", "build_boollist", "build_tensorlist",
};

bool module_matches(const std::string& module, const char* refused) {
  size_t n = std::strlen(refused);
  return module.compare(0, n, refused) == 0 && (module.size() == n || module[n] == '.');
}

}  // namespace

bool is_refused_global(const std::string& module, const std::string& name) {
  // TorchScript's data.pkl tags typed containers with these (pickle_reconstruct.cpp reads
  // them as the value or list they wrap); the rest of torch.jit stays refused.
  if (module == "torch.jit._pickle")
    for (const char* ok : kTorchScriptDataBuilders)
      if (name == ok) return false;
  if (module == "builtins" || module == "__builtin__" || module == "__builtins__") {
    for (const char* ok : kDataBuiltins)
      if (name == ok) return false;
    return true;
  }
  for (const char* m : kRefusedModules)
    if (module_matches(module, m)) return true;
  return false;
}

std::optional<DType> storage_dtype(const std::string& q) {
  struct Pair {
    const char* name;
    DType dtype;
  };
  static constexpr Pair kStorages[] = {
      {"torch.FloatStorage", DType::F32}, {"torch.DoubleStorage", DType::F64},
      {"torch.HalfStorage", DType::F16},  {"torch.BFloat16Storage", DType::BF16},
      {"torch.LongStorage", DType::I64},  {"torch.IntStorage", DType::I32},
      {"torch.ShortStorage", DType::I16}, {"torch.CharStorage", DType::I8},
      {"torch.ByteStorage", DType::U8},   {"torch.BoolStorage", DType::Bool},
  };
  for (const auto& p : kStorages)
    if (q == p.name) return p.dtype;
  return std::nullopt;
}

}  // namespace attnlab::io::pickle
