// See clip_tokens.h.
#include "models/clip_tokens.h"

#include <filesystem>
#include <memory>
#include <mutex>

#include "core/runtime/data_paths.h"

namespace attnlab::models {

std::string shipped_clip_vocabulary() {
  const runtime::DataDir assets = runtime::assets_data_dir();
  const std::string file = "clip/bpe_simple_vocab_16e6.txt.gz";
  if (assets.path.empty())
    throw text::TextError("CLIP's vocabulary (" + file + ") was not found: no assets folder (" +
                          assets.origin + "); set ATTNLAB_ASSETS");
  const std::string path = assets.path + "/" + file;
  if (!std::filesystem::exists(path))
    throw text::TextError("CLIP's vocabulary is missing: no " + path + " (assets from " +
                          assets.origin + ")");
  return path;
}

const text::ClipTokenizer& shipped_clip_tokenizer() {
  // Loaded once; a failure is not cached, so a fixed installation is picked up next time.
  static std::mutex mutex;
  static std::unique_ptr<text::ClipTokenizer> tokenizer;
  const std::lock_guard<std::mutex> lock(mutex);
  if (!tokenizer)
    tokenizer = std::make_unique<text::ClipTokenizer>(
        text::ClipTokenizer::from_file(shipped_clip_vocabulary()));
  return *tokenizer;
}

at::Tensor clip_tokens(const std::vector<std::string>& texts, int64_t context_length,
                       bool truncate) {
  if (context_length < 2)
    throw text::TextError("a context length holds the start and end tokens: at least 2, not " +
                          std::to_string(context_length));
  const auto rows = shipped_clip_tokenizer().tokenize(texts, int(context_length), truncate);
  at::Tensor ids = at::zeros({int64_t(rows.size()), context_length}, at::kLong);
  auto a = ids.accessor<int64_t, 2>();
  for (size_t i = 0; i < rows.size(); ++i)
    for (int64_t j = 0; j < context_length; ++j) a[int64_t(i)][j] = rows[i][size_t(j)];
  return ids;
}

}  // namespace attnlab::models
