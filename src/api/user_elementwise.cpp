// kiln::elementwise: checks the user's names and expression, then builds one User node whose
// inputs are the broadcast operands (dtypes kept) and whose UserAttrs hold the interned text.
#include "kiln/elementwise.hpp"

#include <cstring>
#include <set>
#include <string_view>

#include "api/build.hpp"
#include "api/promotion.hpp"
#include "graph/shape.hpp"
#include "graph/user_code.hpp"

namespace kiln {
namespace {

constexpr const char* kWhat = "kiln::elementwise";

// C++20's keywords and alternative tokens, each between spaces: none can name a variable.
constexpr std::string_view kKeywords =
    " alignas alignof and and_eq asm auto bitand bitor bool break case catch char char8_t"
    " char16_t char32_t class compl concept const consteval constexpr constinit const_cast"
    " continue co_await co_return co_yield decltype default delete do double dynamic_cast else"
    " enum explicit export extern false float for friend goto if inline int long mutable"
    " namespace new noexcept not not_eq nullptr operator or or_eq private protected public"
    " register reinterpret_cast requires return short signed sizeof static static_assert"
    " static_cast struct switch template this thread_local throw true try typedef typeid"
    " typename union unsigned using virtual void volatile wchar_t while xor xor_eq ";

bool is_keyword(const std::string& s) { return kKeywords.find(" " + s + " ") != kKeywords.npos; }

bool is_identifier(const std::string& s) {
  auto alpha = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  if (s.empty() || !alpha(s[0])) return false;
  for (char c : s)
    if (!alpha(c) && !(c >= '0' && c <= '9')) return false;
  return true;
}

// Text for an error message: a control character (a NUL above all, which would end the
// message) shown as '?'.
std::string printable(std::string s) {
  for (char& c : s)
    if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t') c = '?';
  return s;
}

// Names become parameters of the generated code, so they must be plain identifiers that
// neither C++ nor the generated code (which names the kiln namespace) already uses.
void check_name(const std::string& name, std::set<std::string>& seen) {
  auto bad = [&](const std::string& why) {
    throw Error(std::string(kWhat) + ": the input name \"" + printable(name) + "\" " + why +
                "; use a C identifier such as x, y or alpha_1");
  };
  if (!is_identifier(name)) bad("is not a C identifier (letters, digits and _, not first a digit)");
  if (is_keyword(name)) bad("is a C++ keyword");
  if (name == "kiln") bad("is the namespace kiln's generated code uses");
  if (name.rfind("__", 0) == 0 ||
      (name.size() > 1 && name[0] == '_' && name[1] >= 'A' && name[1] <= 'Z'))
    bad("is reserved to the compiler (it starts with __ or _ and a capital)");
  if (!seen.insert(name).second) bad("is given twice");
}

// The expression is pasted into generated code as `return (( expr ));`: it must be one
// expression, so its brackets, quotes and comments must close and no `;` may end it early.
// This is a scan for structure only; NVRTC judges the rest.
void check_expression(const std::string& e) {
  auto bad = [&](const std::string& why) {
    throw Error(std::string(kWhat) + ": the expression \"" + e + "\" " + why);
  };
  if (e.find_first_not_of(" \t\r\n\v\f") == std::string::npos) bad("is empty");
  std::string open;  // brackets not yet closed
  for (size_t i = 0; i < e.size(); ++i) {
    char c = e[i];
    // A NUL would end the source NVRTC reads (and this message: the text is left out of it);
    // other control characters are never C++.
    if (c == '\0' || (static_cast<unsigned char>(c) < 0x20 && !std::strchr("\t\n\r\v\f", c)))
      throw Error(std::string(kWhat) + ": the expression has a control character (code " +
                  std::to_string(static_cast<int>(c)) + ") at offset " + std::to_string(i));
    if (c == '"' || c == '\'') {  // a literal: skip to its closing quote, past escapes
      size_t j = i + 1;
      while (j < e.size() && e[j] != c && e[j] != '\n') j += e[j] == '\\' ? 2 : 1;
      if (j >= e.size() || e[j] != c) bad("has an unterminated quote");
      i = j;
    } else if (c == '/' && i + 1 < e.size() && e[i + 1] == '/') {
      i = e.find('\n', i);
      if (i == std::string::npos) break;
    } else if (c == '/' && i + 1 < e.size() && e[i + 1] == '*') {
      size_t end = e.find("*/", i + 2);
      if (end == std::string::npos) bad("has an unterminated /* comment");
      i = end + 1;
    } else if (c == '(' || c == '[' || c == '{') {
      open += c;
    } else if (c == ')' || c == ']' || c == '}') {
      char want = c == ')' ? '(' : c == ']' ? '[' : '{';
      if (open.empty() || open.back() != want) bad(std::string("has an unmatched '") + c + "'");
      open.pop_back();
    } else if (c == ';' && open.empty()) {
      bad("has a ';' outside brackets: it must be one expression, not statements");
    }
  }
  if (!open.empty()) bad(std::string("has an unclosed '") + open.back() + "'");
}

}  // namespace

Array elementwise(const std::string& expr, const std::vector<ElementwiseInput>& inputs, DType out) {
  check_expression(expr);
  graph::UserCode code{expr, {}};
  std::set<std::string> seen;
  std::vector<const graph::Node*> arrays;
  Shape shape;
  for (const auto& in : inputs) {
    check_name(in.name, seen);
    code.names.push_back(in.name);
    if (auto* arr = std::get_if<Array>(&in.value)) {
      arrays.push_back(&api::node_of(*arr));
      try {
        shape = graph::broadcast_shapes(shape, arrays.back()->shape);
      } catch (const ShapeError& e) {
        throw ShapeError(std::string(kWhat) + ": input \"" + in.name + "\": " + e.what());
      }
    }
  }
  if (arrays.empty())
    throw Error(std::string(kWhat) +
                ": at least one input must be an Array (the result takes its shape and device)");
  Device d = api::common_device(arrays, kWhat);
  std::vector<api::NodeRef> operands;
  for (const auto& in : inputs) {
    api::NodeRef n;
    if (auto* arr = std::get_if<Array>(&in.value)) {
      n = api::copy_to(arr->node(), d);
    } else {
      const Scalar& s = std::get<Scalar>(in.value);
      n = api::scalar(s, api::default_dtype(s), d);
    }
    operands.push_back(api::broadcast(n, shape));
  }
  graph::NodeSpec spec{graph::OpKind::User,
                       0,
                       out,
                       shape,
                       d,
                       std::move(operands),
                       graph::UserAttrs{graph::intern_user_code(code)}};
  return api::finish(graph::make_node(std::move(spec)));
}

}  // namespace kiln
