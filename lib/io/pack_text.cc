#include "io/pack_text.h"

#include <fnmatch.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <memory>

#include "base/error.h"
#include "base/strings.h"
#include "io/recordio_errors.h"
#include "io/text_tokens.h"
#include "io/token_records.h"
#include "io/utf8.h"
#include "io/vocabulary.h"
#include "recordio/atomic_file.h"
#include "recordio/indexed_writer.h"

namespace fs = std::filesystem;

namespace mx {
namespace {

struct TextFile {
  std::string path;
  std::string text;  // normalized (text_tokens.h)
};

struct Document {
  std::string_view text;  // into its file's text
  uint64_t tokens = 0;    // without the end token
};

// The files' texts and their documents with tokens, in order.
struct Corpus {
  std::vector<TextFile> files;
  std::vector<Document> documents;
  uint64_t bytes = 0;
};

struct Part {
  std::string suffix;             // "", "_train" or "_val"
  std::vector<size_t> documents;  // into Corpus::documents
};

struct PartStats {
  uint64_t documents = 0, tokens = 0, unknown = 0, records = 0, bytes = 0;
};

TokenKind token_kind(const std::string& name) {
  if (name == "char") return TokenKind::kChar;
  if (name == "word") return TokenKind::kWord;
  throw InputError("--tokens '" + name + "' is not 'char' or 'word'");
}

void check_options(const PackTextOptions& o) {
  if (o.inputs.empty()) throw InputError("no text files given");
  if (o.prefix.empty()) throw InputError("no output prefix given (-o PREFIX)");
  if (o.unk) {
    if (o.unk->empty()) throw InputError("--unk: the unknown token cannot be empty");
    utf8::check(*o.unk, "--unk");
  }
  utf8::check(o.end_token, "--end-token");
  if (o.end_token == o.unk.value_or("<unk>"))
    throw InputError("--end-token '" + o.end_token + "' is also the unknown token");
  if (o.record_separator && o.line_records)
    throw InputError(
        "--record-separator and --line-records both say where documents end; give one");
  if (o.record_separator && o.record_separator->find('\n') != std::string::npos)
    throw InputError("--record-separator is one line; it cannot hold a newline");
  if (!(o.val_ratio >= 0 && o.val_ratio < 1))
    throw InputError(str("--val-ratio ", o.val_ratio, " is outside [0, 1)"));
  if (o.record_tokens < 1 || o.record_tokens > kMaxRecordTokens)
    throw InputError(str("--record-tokens ", o.record_tokens, " is outside 1..", kMaxRecordTokens));
  const size_t special = o.end_token.empty() ? 1 : 2;
  if (o.max_vocab != 0 && o.vocab.empty() && o.max_vocab <= special)
    throw InputError(str("--max-vocab ", o.max_vocab, " leaves no room beside the unknown",
                         special == 2 ? " and end tokens" : " token"));
}

// The files to read: the given files, and the files of the given folders.
std::vector<std::string> list_inputs(const PackTextOptions& o) {
  std::vector<std::string> files;
  for (const auto& input : o.inputs) {
    std::error_code ec;
    if (!fs::is_directory(input, ec)) {
      files.push_back(input);
      continue;
    }
    std::vector<std::string> found;
    for (const auto& entry : fs::directory_iterator(input, ec)) {
      const std::string name = entry.path().filename().string();
      if (entry.is_symlink(ec) || !entry.is_regular_file(ec) || name.starts_with(".")) continue;
      const bool excluded = std::any_of(o.exclude.begin(), o.exclude.end(), [&](const auto& glob) {
        return fnmatch(glob.c_str(), name.c_str(), 0) == 0;
      });
      if (!excluded) found.push_back(entry.path().string());
    }
    if (ec) throw InputError("cannot list '" + input + "': " + ec.message());
    if (found.empty())
      throw InputError("no text files in '" + input +
                       "' (links, hidden and excluded files are skipped)");
    std::sort(found.begin(), found.end());
    files.insert(files.end(), found.begin(), found.end());
  }
  return files;
}

Corpus read_corpus(const std::vector<std::string>& paths, const DocumentSplit& split,
                   TokenKind kind) {
  Corpus corpus;
  corpus.files.reserve(paths.size());  // documents point into the texts
  for (const auto& path : paths) {
    std::string text = utf8::read_file(path);
    if (text.empty()) throw InputError(path + ": the file is empty");
    corpus.bytes += text.size();
    normalize_text(text);
    corpus.files.push_back({path, std::move(text)});
  }
  for (const auto& file : corpus.files) {
    uint64_t file_tokens = 0;
    for_each_document(file.text, split, [&](std::string_view text) {
      Document document{text, 0};
      for_each_token(text, kind, [&](std::string_view) { ++document.tokens; });
      if (document.tokens == 0) return;
      file_tokens += document.tokens;
      corpus.documents.push_back(document);
    });
    if (file_tokens == 0)
      throw InputError(str(file.path, ": no tokens in its ", file.text.size(), " bytes (",
                           kind == TokenKind::kWord ? "whitespace" : "empty lines",
                           split.record_separator ? " and record separators" : "", " only)"));
  }
  return corpus;
}

// Every document, or with a validation ratio R those i where floor((i+1)R)
// passes an integer for PREFIX_val, spread evenly over the text.
std::vector<Part> split_parts(size_t documents, double val_ratio) {
  if (val_ratio <= 0) {
    Part all{"", std::vector<size_t>(documents)};
    for (size_t i = 0; i < documents; ++i) all.documents[i] = i;
    return {all};
  }
  Part train{"_train", {}}, val{"_val", {}};
  for (size_t i = 0; i < documents; ++i) {
    const bool to_val = std::floor(double(i + 1) * val_ratio) > std::floor(double(i) * val_ratio);
    (to_val ? val : train).documents.push_back(i);
  }
  if (train.documents.empty() || val.documents.empty())
    throw InputError(str("--val-ratio ", val_ratio, " leaves the ",
                         val.documents.empty() ? "validation" : "training", " part empty (",
                         documents, documents == 1 ? " document" : " documents", " in all)"));
  return {train, val};
}

Vocabulary make_vocabulary(const PackTextOptions& o, const Corpus& corpus, const Part& train,
                           TokenKind kind) {
  if (!o.vocab.empty()) {
    Vocabulary v = read_vocabulary(o.vocab, o.max_vocab == 0 ? kMaxVocabulary : o.max_vocab,
                                   o.max_vocab == 0 ? "" : str("--max-vocab ", o.max_vocab));
    if (o.unk && *o.unk != v.unknown())
      throw InputError("--unk '" + *o.unk + "', but the unknown token of " + o.vocab +
                       " (line 1) is '" + escape_token(v.unknown()) + "'");
    if (!o.end_token.empty() && !v.find(o.end_token))
      throw InputError("the end token '" + o.end_token + "' is not in " + o.vocab +
                       " (--end-token names another, --end-token '' none)");
    return v;
  }
  TokenCounter counter;
  for (size_t d : train.documents)
    for_each_token(corpus.documents[d].text, kind, [&](std::string_view t) { counter.add(t); });
  std::vector<std::string> special{o.unk.value_or("<unk>")};
  if (!o.end_token.empty()) special.push_back(o.end_token);
  return build_vocabulary(counter, special, o.max_vocab);
}

// Writes the part's documents as token records: each document's ids (and
// the end token's) in records of at most `record_tokens` ids.
PartStats write_part(const Corpus& corpus, const Part& part, const Vocabulary& vocabulary,
                     TokenKind kind, std::optional<int32_t> end_id, size_t record_tokens,
                     recordio::IndexedWriter& writer) {
  PartStats stats;
  std::vector<int32_t> ids;
  std::string payload;
  for (size_t d : part.documents) {
    ids.clear();
    for_each_token(corpus.documents[d].text, kind,
                   [&](std::string_view t) { ids.push_back(vocabulary.id(t)); });
    if (end_id) ids.push_back(*end_id);
    stats.unknown += static_cast<uint64_t>(std::count(ids.begin(), ids.end(), 0));
    for (size_t first = 0; first < ids.size(); first += record_tokens) {
      const size_t count = std::min(record_tokens, ids.size() - first);
      pack_token_record({static_cast<uint32_t>(count), stats.documents, first},
                        std::span<const int32_t>(ids).subspan(first, count), payload);
      with_recordio_errors([&] { writer.write(static_cast<int64_t>(stats.records), payload); });
      ++stats.records;
    }
    ++stats.documents;
    stats.tokens += ids.size();
  }
  stats.bytes = writer.bytes();
  return stats;
}

bool same_file(const std::string& a, const std::string& b) {
  std::error_code ec;
  return fs::equivalent(a, b, ec);
}

}  // namespace

void pack_text(const PackTextOptions& o, std::ostream& out) {
  const auto start = std::chrono::steady_clock::now();
  check_options(o);
  const TokenKind kind = token_kind(o.tokens);
  const DocumentSplit split{o.record_separator, o.line_records};
  const Corpus corpus = read_corpus(list_inputs(o), split, kind);
  const std::vector<Part> parts = split_parts(corpus.documents.size(), o.val_ratio);
  const Vocabulary vocabulary = make_vocabulary(o, corpus, parts.front(), kind);
  std::optional<int32_t> end_id;
  if (!o.end_token.empty()) end_id = vocabulary.find(o.end_token);
  if (end_id == 0)
    throw InputError("--end-token '" + o.end_token + "' is the unknown token of " + o.vocab);

  // Every output is complete under a temporary name before any is renamed.
  std::vector<std::unique_ptr<recordio::IndexedWriter>> writers;
  std::vector<PartStats> stats;
  for (const auto& part : parts) {
    const std::string base = o.prefix + part.suffix;
    writers.push_back(with_recordio_errors(
        [&] { return std::make_unique<recordio::IndexedWriter>(base + ".rec", base + ".idx"); }));
    stats.push_back(
        write_part(corpus, part, vocabulary, kind, end_id, o.record_tokens, *writers.back()));
  }
  const std::string vocab_path = o.prefix + ".vocab";
  std::unique_ptr<recordio::AtomicFile> vocab_file;
  if (o.vocab.empty() || !same_file(o.vocab, vocab_path)) {
    vocab_file =
        with_recordio_errors([&] { return std::make_unique<recordio::AtomicFile>(vocab_path); });
    write_vocabulary(vocab_file->stream(), vocabulary);
  }
  with_recordio_errors([&] {
    for (auto& writer : writers) writer->commit();
    if (vocab_file) vocab_file->commit();
  });

  for (size_t i = 0; i < parts.size(); ++i) {
    const std::string base = o.prefix + parts[i].suffix;
    const PartStats& s = stats[i];
    out << base << ".rec: " << s.documents << " documents, " << s.tokens << " tokens in "
        << s.records << " records, " << format_bytes(double(s.bytes)) << "; " << s.unknown
        << " unknown (" << str(std::round(1e4 * double(s.unknown) / double(s.tokens)) / 100)
        << "%)\n  index " << base << ".idx\n";
  }
  out << vocab_path << ": " << vocabulary.size() << " tokens (" << o.tokens << "), 0 "
      << escape_token(vocabulary.unknown());
  if (end_id) out << ", " << *end_id << " " << escape_token(o.end_token);
  if (!vocab_file) out << " (given)";
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  out << "\n"
      << corpus.files.size() << " file(s), " << format_bytes(double(corpus.bytes)) << " of text in "
      << str(std::round(seconds * 100) / 100) << " s\n";
}

}  // namespace mx
