// User expressions (kiln::elementwise): the CUDA C++ text and the names it reads, interned so a
// User node carries them as one integer (UserAttrs). Equal (text, names) give the same id and
// different ones different ids, so hash-consing (which compares attributes) and the structural
// hash (which mixes them) tell expressions apart exactly, with no string in Node.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace kiln::graph {

struct UserCode {
  std::string expr;                // a CUDA C++ expression
  std::vector<std::string> names;  // the variable each input is bound to, in input order
  bool operator==(const UserCode&) const = default;
};

// The id of this code, registering it on first sight. Entries live until the process ends, as
// the kernels compiled from them do; a program makes few distinct expressions.
int64_t intern_user_code(const UserCode& code);
// The code behind an id from intern_user_code. The reference stays valid for the process.
const UserCode& user_code(int64_t id);

}  // namespace kiln::graph
