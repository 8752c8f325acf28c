// Writes small seed inputs for the fuzzers (a few torch.save-shaped archives and
// pickles made by the test builders, and .npy files from our encoder) into the folder given as
// argv[1].
#include <cstdio>
#include <fstream>
#include <string>

#include "core/io/npy.h"
#include "tests/support/archive_builder.h"

int main(int argc, char** argv) {
  using namespace attnlab::testing;
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_seeds DIR\n");
    return 2;
  }
  auto write = [&](const std::string& name, const Bytes& b) {
    std::ofstream(std::string(argv[1]) + "/" + name, std::ios::binary)
        .write(reinterpret_cast<const char*>(b.data()), std::streamsize(b.size()));
  };
  write("pth_two_tensors", make_pth({{"a", {1, 2, 3}}, {"b.weight", {4}}}));
  write("pth_empty", make_pth({}));
  PickleWriter p;
  p.proto().empty_dict().mark();
  p.str("model").global("collections", "OrderedDict").empty_tuple().reduce();
  p.str("w").tensor("FloatStorage", "0", 16, 2, {2, 3}, {1, 2}).setitem();
  p.str("args").global("argparse", "Namespace").empty_tuple().raw({0x81}).empty_dict().op('b');
  p.str("epoch").int4(300).setitems().stop();
  write("pickle_checkpoint", p.bytes());
  write("pickle_list", PickleWriter().proto().raw({']', 'q', 0, 'h', 0, 'a'}).stop().bytes());
  using attnlab::io::DType;
  int i = 0;
  for (DType dt : {DType::F32, DType::F16, DType::I64, DType::U8, DType::Bool}) {
    for (std::vector<int64_t> shape : {std::vector<int64_t>{}, {3}, {2, 3}, {0, 4}}) {
      attnlab::io::RawTensor t;
      t.dtype = dt;
      t.shape = shape;
      t.bytes.assign(size_t(t.numel()) * attnlab::io::dtype_size(dt), 1);
      write("npy_" + std::to_string(i++), attnlab::io::encode_npy(t));
    }
  }
  return 0;
}
