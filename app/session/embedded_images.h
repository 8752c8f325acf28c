// Finding again the image files an embed folder's images.csv names. embed writes each path
// as it was given (relative paths stay relative to the directory embed ran in), so a reader
// started elsewhere — the report, the GUI, a notebook — would otherwise miss them. embed.json
// records that directory (`working_directory`); a relative name is tried as written (this
// process's directory), then against it, then against the folder itself (images copied
// beside their embeddings).
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

#include "core/image/preprocess.h"

namespace attnlab::session {

class EmbeddedImagePaths {
 public:
  // `record`: the folder's embed.json (null or without the key: an older folder).
  EmbeddedImagePaths(std::string dir, const nlohmann::json& record);
  // Reads dir/embed.json when it is there (a missing or malformed one: no recorded directory).
  static EmbeddedImagePaths of_folder(const std::string& dir);
  // The first of those candidates that exists; the name as written when none does (opening
  // it then fails with a message naming it). A dataset's "name#i" is returned as it is.
  std::string resolve(const std::string& image) const;

 private:
  std::string dir_, working_directory_;
};

// The geometric preprocessing embed read the image files with (embed.json's model: resize,
// crop, crop width, filter), to show pictures as the model saw them; nullopt when the record
// does not say (no model entry, or an older one without "preprocessing_crop"). The mean and
// std are left ImageNet's: the pictures shown are normalised and un-normalised with the
// same pair, so they do not change them.
std::optional<image::Preprocessing> embedded_image_preprocessing(const nlohmann::json& record);

// The record's entry for embedding_record: this process's working directory.
std::string embedding_working_directory();

}  // namespace attnlab::session
