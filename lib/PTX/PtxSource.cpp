//===- PtxSource.cpp - PTX text as functions of instructions --------------===//
//
// PTX ISA chapter 4 (syntax): statements end in ';', labels end in ':',
// `{ }` opens a scope where it starts a statement and groups a vector
// operand inside one; `.loc` and `.file` end at the line's end; comments are
// C++'s. Everything else (directives other than `.reg`, debug sections,
// initialisers) is read past.
//
//===----------------------------------------------------------------------===//

#include "nvwgmma/PTX/PtxSource.h"

#include "llvm/ADT/StringExtras.h"
#include <algorithm>

using namespace mlir::nvwgmma::ptx;
using llvm::StringRef;

bool Scope::declares(StringRef name) const {
  if (registers.contains(name))
    return true;
  // %r12 against `%r<N>`: the longest non-digit prefix names the range.
  size_t digits = name.size();
  while (digits > 0 && llvm::isDigit(name[digits - 1]))
    --digits;
  unsigned n;
  if (digits == name.size() || name.substr(digits).getAsInteger(10, n))
    return false;
  auto it = ranges.find(name.substr(0, digits));
  return it != ranges.end() && n < it->second;
}

namespace {

/// The text with comments turned into spaces (newlines kept, so offsets and
/// lines stay those of the input); string literals are left alone.
std::shared_ptr<const std::string> blankComments(StringRef in) {
  auto out = std::make_shared<std::string>(in.str());
  std::string &s = *out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '"') {
      for (++i; i < s.size() && s[i] != '"' && s[i] != '\n'; ++i)
        ;
    } else if (s[i] == '/' && i + 1 < s.size() && s[i + 1] == '/') {
      for (; i < s.size() && s[i] != '\n'; ++i)
        s[i] = ' ';
    } else if (s[i] == '/' && i + 1 < s.size() && s[i + 1] == '*') {
      for (; i < s.size() &&
             !(s[i] == '*' && i + 1 < s.size() && s[i + 1] == '/');
           ++i)
        if (s[i] != '\n')
          s[i] = ' ';
      if (i + 1 < s.size())
        s[i] = s[i + 1] = ' ';
      ++i;
    }
  }
  return out;
}

bool isIdentifier(StringRef s) {
  if (s.empty() ||
      !(llvm::isAlpha(s[0]) || s[0] == '_' || s[0] == '$' || s[0] == '%'))
    return false;
  return llvm::all_of(s.drop_front(), [](char c) {
    return llvm::isAlnum(c) || c == '_' || c == '$';
  });
}

/// Skips a string literal starting at `pos`; returns the closing quote.
size_t skipString(StringRef text, size_t pos) {
  size_t end = text.find('"', pos + 1);
  return end == StringRef::npos ? text.size() : end;
}

/// A statement that ends at the line's end rather than at a ';'.
bool endsAtNewline(StringRef stmt) {
  return stmt.starts_with(".loc") || stmt.starts_with(".file") ||
         stmt.starts_with("#");
}

class LineTable {
public:
  explicit LineTable(StringRef text) {
    starts.push_back(0);
    for (size_t i = 0; i < text.size(); ++i)
      if (text[i] == '\n')
        starts.push_back(i + 1);
  }
  unsigned lineOf(size_t pos) const {
    return std::upper_bound(starts.begin(), starts.end(), pos) - starts.begin();
  }

private:
  std::vector<size_t> starts;
};

llvm::SmallVector<StringRef, 4> splitOperands(StringRef rest) {
  llvm::SmallVector<StringRef, 4> out;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i <= rest.size(); ++i) {
    char c = i < rest.size() ? rest[i] : ',';
    if (c == '[' || c == '{' || c == '(')
      ++depth;
    else if (c == ']' || c == '}' || c == ')')
      depth = std::max(0, depth - 1);
    else if (c == ',' && depth == 0) {
      if (StringRef tok = rest.slice(start, i).trim(); !tok.empty())
        out.push_back(tok);
      start = i + 1;
    }
  }
  return out;
}

/// Reads statements of a body into `f`, from `pos` to the '}' that closes
/// scope 0 (when `untilClose`) or to the end of the text.
class BodyReader {
public:
  BodyReader(StringRef text, const LineTable &lines, Function &f)
      : text(text), lines(lines), f(f) {}

  size_t read(size_t pos, bool untilClose) {
    f.scopes.emplace_back();
    std::vector<unsigned> stack{0};
    size_t stmtStart = pos;
    int braces = 0; // `{` of a vector operand inside the statement
    for (; pos < text.size(); ++pos) {
      char c = text[pos];
      StringRef stmt = text.slice(stmtStart, pos).trim();
      if (c == '"') {
        pos = skipString(text, pos);
      } else if (c == '\n') {
        if (endsAtNewline(stmt))
          stmtStart = pos + 1;
      } else if (c == '{') {
        if (!stmt.empty()) {
          ++braces;
          continue;
        }
        Scope s;
        s.parent = stack.back();
        f.scopes.push_back(std::move(s));
        stack.push_back(f.scopes.size() - 1);
        stmtStart = pos + 1;
      } else if (c == '}') {
        if (braces > 0) {
          --braces;
          continue;
        }
        flush(stmtStart, pos, stack.back());
        stmtStart = pos + 1;
        if (stack.size() > 1) {
          stack.pop_back();
        } else if (untilClose) {
          return pos + 1;
        }
      } else if (c == ';' && braces == 0) {
        flush(stmtStart, pos, stack.back());
        stmtStart = pos + 1;
      } else if (c == ':' && braces == 0 && isIdentifier(stmt) &&
                 (pos + 1 >= text.size() || text[pos + 1] != ':')) {
        f.scopes[stack.back()].labels[stmt] = f.body.size();
        stmtStart = pos + 1;
      }
    }
    flush(stmtStart, text.size(), stack.back());
    return text.size();
  }

private:
  void flush(size_t begin, size_t end, unsigned scope) {
    StringRef stmt = text.slice(begin, end);
    size_t lead = stmt.size() - stmt.ltrim().size();
    stmt = stmt.trim();
    if (stmt.empty() || endsAtNewline(stmt))
      return;
    if (stmt.starts_with(".")) {
      if (stmt.consume_front(".reg"))
        declare(stmt, f.scopes[scope]);
      return;
    }
    Instruction in;
    in.scope = scope;
    in.line = lines.lineOf(begin + lead);
    if (stmt.consume_front("@")) {
      in.guardNegated = stmt.consume_front("!");
      size_t space = stmt.find_first_of(" \t\n\r");
      in.guard = stmt.substr(0, space);
      stmt = space == StringRef::npos ? "" : stmt.substr(space).ltrim();
    }
    size_t space = stmt.find_first_of(" \t\n\r");
    in.mnemonic = stmt.substr(0, space);
    if (in.mnemonic.empty())
      return;
    if (space != StringRef::npos)
      in.operands = splitOperands(stmt.substr(space).trim());
    f.body.push_back(std::move(in));
  }

  /// `.reg .b32 %r<10>, %x;` (after ".reg").
  static void declare(StringRef decl, Scope &scope) {
    decl = decl.ltrim();
    while (decl.starts_with(".")) { // .b32, .v4, ...
      size_t space = decl.find_first_of(" \t\n\r");
      decl = space == StringRef::npos ? "" : decl.substr(space).ltrim();
    }
    llvm::SmallVector<StringRef> names;
    decl.split(names, ',');
    for (StringRef name : names) {
      name = name.trim();
      if (size_t lt = name.find('<'); lt != StringRef::npos) {
        unsigned count = 0;
        if (!name.slice(lt + 1, name.find('>')).trim().getAsInteger(10, count))
          scope.ranges[name.substr(0, lt).trim()] = count;
      } else if (!name.empty()) {
        scope.registers[name.substr(0, name.find('[')).trim()] = 0;
      }
    }
  }

  StringRef text;
  const LineTable &lines;
  Function &f;
};

/// The name after `.entry`/`.func` in a header (past a `.func`'s return
/// parameter list); empty if none.
StringRef functionName(StringRef header, bool &entry) {
  size_t at = StringRef::npos;
  for (StringRef kw : {".entry", ".func"}) {
    for (size_t p = header.find(kw); p != StringRef::npos;
         p = header.find(kw, p + 1)) {
      size_t after = p + kw.size();
      bool wordEnd = after >= header.size() || !llvm::isAlnum(header[after]);
      if (wordEnd && (p == 0 || !llvm::isAlnum(header[p - 1]))) {
        at = after;
        entry = kw == ".entry";
        break;
      }
    }
    if (at != StringRef::npos)
      break;
  }
  if (at == StringRef::npos)
    return "";
  StringRef rest = header.substr(at).ltrim();
  if (rest.starts_with("(")) {
    size_t close = rest.find(')');
    rest = close == StringRef::npos ? "" : rest.substr(close + 1).ltrim();
  }
  size_t end = 0;
  while (end < rest.size() && (llvm::isAlnum(rest[end]) || rest[end] == '_' ||
                               rest[end] == '$' || rest[end] == '%'))
    ++end;
  return rest.substr(0, end);
}

/// `.maxntid 384, 1, 1` or `.reqntid 128` in a header: the x extent.
unsigned threadsX(StringRef header) {
  for (StringRef directive : {".maxntid", ".reqntid"}) {
    size_t at = header.find(directive);
    if (at == StringRef::npos)
      continue;
    StringRef rest = header.substr(at + directive.size()).ltrim();
    unsigned x = 0;
    if (!rest.take_while(llvm::isDigit).getAsInteger(10, x))
      return x;
  }
  return 0;
}

} // namespace

std::vector<Function> mlir::nvwgmma::ptx::parseModule(StringRef input) {
  std::shared_ptr<const std::string> storage = blankComments(input);
  StringRef text = *storage;
  LineTable lines(text);
  std::vector<Function> out;
  size_t stmtStart = 0;
  for (size_t pos = 0; pos < text.size(); ++pos) {
    char c = text[pos];
    if (c == '"') {
      pos = skipString(text, pos);
    } else if (c == '\n') {
      if (endsAtNewline(text.slice(stmtStart, pos).trim()))
        stmtStart = pos + 1;
    } else if (c == ';') {
      stmtStart = pos + 1;
    } else if (c == '{') {
      StringRef header = text.slice(stmtStart, pos);
      bool entry = false;
      StringRef name = functionName(header, entry);
      if (!name.empty()) {
        Function f;
        f.storage = storage;
        f.name = name.str();
        f.entry = entry;
        f.threadsX = threadsX(header);
        f.line =
            lines.lineOf(stmtStart + header.size() - header.ltrim().size());
        pos = BodyReader(text, lines, f).read(pos + 1, /*untilClose=*/true);
        out.push_back(std::move(f));
      } else { // a debug section, an initialiser: balanced braces
        int depth = 0;
        for (; pos < text.size(); ++pos) {
          if (text[pos] == '"')
            pos = skipString(text, pos);
          else if (text[pos] == '{')
            ++depth;
          else if (text[pos] == '}' && --depth == 0)
            break;
        }
        ++pos;
      }
      stmtStart = pos;
      --pos;
    }
  }
  return out;
}

Function mlir::nvwgmma::ptx::parseBody(StringRef input) {
  Function f;
  f.storage = blankComments(input);
  StringRef text = *f.storage;
  LineTable lines(text);
  BodyReader(text, lines, f).read(0, /*untilClose=*/false);
  return f;
}
