// `dvejit ucode DIR [--set NAME] [--op N] [--diff SET_A SET_B] [--gen G]`: inspect a DVE
// microcode table directory (spec/microcode.md §4.1).
#pragma once

#include <ostream>

namespace dvejit {

// argv[0] is "ucode". Returns 0 on success, 1 when the table directory is bad (the message names
// the file), 2 on a usage error. Writes the report to `out`, diagnostics to `err`.
int UcodeMain(int argc, char** argv, std::ostream& out, std::ostream& err);

}  // namespace dvejit
