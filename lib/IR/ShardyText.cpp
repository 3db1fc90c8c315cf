//===- ShardyText.cpp - Shardy (sdy) attribute text -----------------------===//
//
// Reads `#sdy.mesh<...>`, `#sdy.sharding<...>` and
// `#sdy.sharding_per_value<...>` through their text: Shardy is never
// registered in memfit's contexts.
//
//===----------------------------------------------------------------------===//
#include "memfit/IR/OpViews.h"

using namespace mlir;
using namespace memfit;

namespace {

/// `"name"` at the front of `s` (consumed), or nullopt.
std::optional<std::string> takeQuoted(llvm::StringRef &s) {
  s = s.ltrim();
  if (!s.consume_front("\""))
    return std::nullopt;
  size_t end = s.find('"');
  if (end == llvm::StringRef::npos)
    return std::nullopt;
  std::string name = s.take_front(end).str();
  s = s.drop_front(end + 1);
  return name;
}

/// The text between the bracket at the front of `s` and its match.
std::optional<llvm::StringRef> bracketed(llvm::StringRef s, char open, char close) {
  s = s.ltrim();
  if (s.empty() || s.front() != open)
    return std::nullopt;
  int depth = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == open)
      ++depth;
    else if (s[i] == close && --depth == 0)
      return s.slice(1, i);
  }
  return std::nullopt;
}

/// `@mesh, [{"x", ?}, {}] ...`: the mesh reference and the dimension list.
std::optional<ShardingText> parseShardingBody(llvm::StringRef s) {
  s = s.ltrim();
  if (!s.consume_front("@"))
    return std::nullopt; // an inline mesh: not read
  ShardingText out;
  size_t comma = s.find(',');
  if (comma == llvm::StringRef::npos)
    return std::nullopt;
  out.mesh = s.take_front(comma).trim().str();
  std::optional<llvm::StringRef> list = bracketed(s.drop_front(comma + 1), '[', ']');
  if (!list)
    return std::nullopt;
  llvm::StringRef rest = *list;
  while (!(rest = rest.ltrim()).empty()) {
    std::optional<llvm::StringRef> dim = bracketed(rest, '{', '}');
    if (!dim)
      return std::nullopt;
    rest = rest.ltrim().drop_front(dim->size() + 2).ltrim();
    rest.consume_front(",");
    llvm::SmallVector<std::string, 2> axes;
    llvm::StringRef d = *dim;
    bool exact = true;
    while (!(d = d.ltrim()).empty()) {
      if (d.consume_front("?")) { // an open dimension: what is listed holds
      } else if (std::optional<std::string> name = takeQuoted(d)) {
        if (d.ltrim().starts_with(":")) { // a sub-axis "x":(1)2
          exact = false;
          d = d.drop_until([](char c) { return c == ','; });
        } else {
          axes.push_back(*name);
        }
      } else {
        return std::nullopt;
      }
      d = d.ltrim();
      d.consume_front(",");
    }
    if (!exact) {
      out.exact = false;
      axes.clear();
    }
    out.dims.push_back(std::move(axes));
  }
  return out;
}

} // namespace

std::optional<MeshText> memfit::parseMeshText(llvm::StringRef text) {
  size_t at = text.find('[');
  if (!text.starts_with("#sdy.mesh<") || at == llvm::StringRef::npos)
    return std::nullopt;
  std::optional<llvm::StringRef> list = bracketed(text.drop_front(at), '[', ']');
  if (!list)
    return std::nullopt;
  MeshText mesh;
  llvm::StringRef s = *list;
  while (!(s = s.ltrim()).empty()) {
    std::optional<std::string> name = takeQuoted(s);
    int64_t size = 0;
    s = s.ltrim();
    if (!name || !s.consume_front("="))
      return std::nullopt;
    if (s.consumeInteger(10, size) || size <= 0)
      return std::nullopt;
    mesh.axes.push_back({*name, size});
    s = s.ltrim();
    s.consume_front(",");
  }
  return mesh;
}

std::optional<ShardingText> memfit::parseShardingText(llvm::StringRef text) {
  if (!text.consume_front("#sdy.sharding<"))
    return std::nullopt;
  return parseShardingBody(text);
}

std::optional<llvm::SmallVector<ShardingText, 2>>
memfit::parseShardingPerValueText(llvm::StringRef text) {
  if (!text.consume_front("#sdy.sharding_per_value<"))
    return std::nullopt;
  std::optional<llvm::StringRef> list = bracketed(text, '[', ']');
  if (!list)
    return std::nullopt;
  llvm::SmallVector<ShardingText, 2> out;
  llvm::StringRef s = *list;
  while (!(s = s.ltrim()).empty()) {
    std::optional<llvm::StringRef> one = bracketed(s, '<', '>');
    if (!one)
      return std::nullopt;
    std::optional<ShardingText> sh = parseShardingBody(*one);
    if (!sh)
      return std::nullopt;
    out.push_back(std::move(*sh));
    s = s.ltrim().drop_front(one->size() + 2).ltrim();
    s.consume_front(",");
  }
  return out;
}
