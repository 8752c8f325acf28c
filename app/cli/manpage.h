// `attnlab manpage`: the man page (roff, section 1), generated from the same command
// table as --help (app/cli/commands.h), so the two cannot disagree. Each command's help
// lines are set as they appear in --help (no-fill), under sections a man reader expects:
// NAME, SYNOPSIS, DESCRIPTION, COMMANDS, GLOBAL OPTIONS, ENVIRONMENT, FILES, EXIT STATUS,
// EXAMPLES. The .deb installs it as /usr/share/man/man1/attnlab.1.gz (scripts/package.sh).
#pragma once

#include <string>

namespace attnlab::cli {

// Plain text as roff: backslashes and hyphens escaped, a line starting with '.' or '\''
// protected, the one non-ASCII character in the help (an em dash) as \(em.
std::string roff_escape(const std::string& text);

// The whole page.
std::string man_page();

}  // namespace attnlab::cli
