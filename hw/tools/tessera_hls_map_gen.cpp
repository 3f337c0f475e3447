// tessera-hls-map-gen: derives the HLS bitstream's AXI4-Lite register map (each stage IP's CONTROL_BUS) from the HLS design's top functions and writes it as a C++ header and a docs table.
//
// Vitis HLS lays an s_axilite bundle out as ap_ctrl_hs control (0x00), GIE (0x04), IER (0x08),
// ISR (0x0c), then from 0x10 the function's return value (if on the bundle) and the bundle's
// arguments in the order of the signature. Each value of W bits takes ceil(W/32) data words and
// one more word: reserved after an input and after ap_return, the ap_vld flag after an output. An argument the
// function reads and writes (a non-const reference) gets an input group NAME_i, then an output
// group NAME_o. An m_axi pointer with offset=slave is its address register, 32 or 64 bits as
// hls.tcl's config_interface -m_axi_addr64 says. A struct is aggregated, its members packed from
// bit 0 in declaration order. Everything here is read from hls/design and scripts/fpga/hls.tcl,
// so the driver, the fake board and the synthesized IPs see one layout.
#include <cstdio>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tessera/support/error.h"
#include "tessera/support/file_io.h"
#include "write_if_changed.h"

using tessera::Error;
using tessera::hw::tools::writeIfChanged;

namespace {

const char* const kStages[] = {"fetch", "load", "compute", "store"};
const char* const kBundle = "CONTROL_BUS";

std::string trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

std::string camel(const std::string& snake) {
  std::string out = "k";
  bool up = true;
  for (char c : snake) {
    if (c == '_') { up = true; continue; }
    out += up ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
    up = false;
  }
  return out;
}

// Register offsets as Vitis HLS's own register maps print them: at least two hex digits.
std::string offsetText(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%02x", v);
  return buf;
}

// Bit widths of the design's types: macros of hls_config.h, typedefs and structs of the header.
struct Types {
  std::map<std::string, long> macros;
  std::map<std::string, std::string> typedefs;
  std::map<std::string, std::vector<std::pair<std::string, std::string>>> structs;  // members: type, name
  std::string where;

  long number(const std::string& text) const {
    const std::string t = trim(text);
    if (!t.empty() && std::isdigit(static_cast<unsigned char>(t[0]))) return std::stol(t);
    const auto it = macros.find(t);
    if (it == macros.end()) throw Error(where, "width '" + t + "' is neither a number nor a macro of hls_config.h");
    return it->second;
  }

  long bits(const std::string& typeText) const {
    static const std::regex ap(R"(^(?:const\s+)?ap_u?int<\s*([A-Za-z0-9_]+)\s*>$)");
    const std::string t = trim(typeText);
    std::smatch m;
    if (std::regex_match(t, m, ap)) return number(m[1]);
    if (t == "int" || t == "uint32_t" || t == "int32_t") return 32;
    if (auto it = typedefs.find(t); it != typedefs.end()) return bits(it->second);
    if (auto it = structs.find(t); it != structs.end()) {
      long sum = 0;
      for (const auto& member : it->second) sum += bits(member.first);
      return sum;
    }
    throw Error(where, "cannot tell the width of type '" + t + "'");
  }
};

Types readTypes(const std::string& header, const std::string& hlsConfig) {
  Types t;
  t.where = header;
  const std::string cfg = tessera::readTextFile(hlsConfig);
  static const std::regex def(R"(#define\s+(\w+)\s+\(?(-?\d+)\)?\s*\n)");
  for (auto it = std::sregex_iterator(cfg.begin(), cfg.end(), def); it != std::sregex_iterator(); ++it)
    t.macros[(*it)[1]] = std::stol((*it)[2]);
  const std::string h = tessera::readTextFile(header);
  static const std::regex td(R"(typedef\s+(ap_u?int<\s*\w+\s*>)\s+(\w+)\s*;)");
  for (auto it = std::sregex_iterator(h.begin(), h.end(), td); it != std::sregex_iterator(); ++it)
    t.typedefs[(*it)[2]] = (*it)[1];
  static const std::regex st(R"(struct\s+(\w+)\s*\{([^}]*)\};)");
  static const std::regex member(R"(^\s*([A-Za-z_][\w<>\s]*?)\s+(\w+)\s*;)");
  for (auto it = std::sregex_iterator(h.begin(), h.end(), st); it != std::sregex_iterator(); ++it) {
    std::istringstream body((*it)[2].str());
    std::string line;
    std::vector<std::pair<std::string, std::string>> members;
    bool arrays = false;
    while (std::getline(body, line)) {
      line = line.substr(0, line.find("//"));
      if (trim(line).empty()) continue;
      if (line.find('[') != std::string::npos) arrays = true;
      std::smatch m;
      if (std::regex_search(line, m, member)) members.emplace_back(trim(m[1]), m[2]);
    }
    if (!arrays) t.structs[(*it)[1]] = members;  // structs with arrays never cross an AXI4-Lite bus
  }
  return t;
}

// One register group of a bundle.
struct Group {
  std::string name;  // the argument, with _i / _o for a read-and-written one; ap_return
  uint32_t offset;
  long bits;
  bool output;
  std::string what;
  bool valid = false;  // an ap_vld word follows the data (outputs but ap_return)
};

struct Param {
  std::string type, name;
  bool pointer = false, reference = false, isConst = false;
};

std::vector<Param> params(const std::string& sig, const std::string& where) {
  std::vector<Param> out;
  int depth = 0;
  std::string cur;
  auto flush = [&] {
    std::string p = trim(cur);
    cur.clear();
    if (p.empty()) return;
    Param q;
    static const std::regex arg(R"(^(.*?)([&*]?)\s*(\w+)\s*(\[.*\])?$)");
    std::smatch m;
    if (!std::regex_match(p, m, arg)) throw Error(where, "cannot read the parameter '" + p + "'");
    q.type = trim(m[1]);
    // volatile changes how C simulation reads the argument, not its register.
    for (size_t v; (v = q.type.find("volatile ")) != std::string::npos;) q.type.erase(v, 9);
    q.type = trim(q.type);
    q.name = m[3];
    q.pointer = m[2] == "*" || m[4].matched;
    q.reference = m[2] == "&";
    if (q.type.rfind("const ", 0) == 0) {
      q.isConst = true;
      q.type = trim(q.type.substr(6));
    }
    if (!q.type.empty() && (q.type.back() == '*' || q.type.back() == '&')) {
      q.pointer |= q.type.back() == '*';
      q.reference |= q.type.back() == '&';
      q.type = trim(q.type.substr(0, q.type.size() - 1));
    }
    out.push_back(q);
  };
  for (char c : sig) {
    if (c == '<' || c == '[' || c == '(') ++depth;
    if (c == '>' || c == ']' || c == ')') --depth;
    if (c == ',' && depth == 0) flush();
    else cur += c;
  }
  flush();
  return out;
}

struct Ip {
  std::string stage;
  std::set<std::string> structs;  // struct types crossing the bus, whose field positions the header gives
  std::vector<Group> groups;
  uint32_t end = 0;
};

Ip layout(const std::string& stage, const std::string& source, const std::string& sourcePath, const Types& types,
          long pointerBits) {
  const std::regex head("(^|\\n)(int|void)\\s+" + stage + "\\s*\\(([^)]*)\\)\\s*\\{");
  std::smatch m;
  if (!std::regex_search(source, m, head))
    throw Error(sourcePath, "no definition 'int " + stage + "(...) {' or 'void " + stage + "(...) {' of the HLS top " + stage);
  const std::string where = sourcePath + ", function " + stage;
  const bool returnsValue = m[2] == "int";
  const std::vector<Param> ps = params(m[3], where);
  // The pragmas right after the opening brace.
  std::map<std::string, std::vector<std::map<std::string, std::string>>> pragmas;  // port -> each pragma's keys
  std::istringstream rest(source.substr(m.position(0) + m.length(0)));
  std::string line;
  while (std::getline(rest, line)) {
    line = trim(line);
    if (line.empty()) continue;
    if (line.rfind("#pragma HLS INTERFACE", 0) != 0) break;
    std::istringstream words(line.substr(21));
    std::map<std::string, std::string> kv;
    std::string word;
    std::vector<std::string> tokens;
    while (words >> word) tokens.push_back(word);
    for (size_t i = 0; i < tokens.size(); ++i) {
      if (i + 2 < tokens.size() && tokens[i + 1] == "=") {
        kv[tokens[i]] = tokens[i + 2];
        i += 2;
      } else if (tokens[i].find('=') != std::string::npos) {
        kv[tokens[i].substr(0, tokens[i].find('='))] = tokens[i].substr(tokens[i].find('=') + 1);
      } else {
        kv["mode"] = tokens[i];
      }
    }
    if (!kv.count("port")) throw Error(where, "INTERFACE pragma without port: " + line);
    pragmas[kv["port"]].push_back(kv);
  }
  auto has = [&](const std::string& port, const std::string& mode, const std::string& key, const std::string& value) {
    const auto it = pragmas.find(port);
    if (it == pragmas.end()) return false;
    for (const auto& kv : it->second)
      if (kv.count("mode") && kv.at("mode") == mode && (key.empty() || (kv.count(key) && kv.at(key) == value)))
        return true;
    return false;
  };
  auto axilite = [&](const std::string& port) { return has(port, "s_axilite", "bundle", kBundle); };
  Ip ip;
  ip.stage = stage;
  uint32_t next = 0x10;
  auto add = [&](const std::string& name, long bits, bool output, const std::string& what) {
    ip.groups.push_back(Group{name, next, bits, output, what, output && name != "ap_return"});
    next += static_cast<uint32_t>(4 * ((bits + 31) / 32 + 1));
  };
  // ap_ctrl_hs's own bundle: where the return value and, unless placed elsewhere, the m_axi offsets go.
  const bool controlHere = axilite("return");
  if (controlHere && returnsValue) add("ap_return", 32, true, "the value the call returned");
  for (const Param& p : ps) {
    const bool offsetHere = p.pointer && controlHere && has(p.name, "m_axi", "offset", "slave") &&
                            !has(p.name, "s_axilite", "", "");
    if (!axilite(p.name) && !offsetHere) continue;
    if (p.pointer) {
      if (!has(p.name, "m_axi", "offset", "slave"))
        throw Error(where, "pointer " + p.name + " is on " + kBundle + " but its m_axi pragma lacks offset = slave");
      add(p.name, pointerBits, false, "base address of the m_axi port " + p.name);
      continue;
    }
    const long bits = types.bits(p.type);
    if (p.reference && !p.isConst) {
      if (types.structs.count(p.type)) ip.structs.insert(p.type);
      add(p.name + "_i", bits, false, p.type + " " + p.name + " as the call reads it");
      add(p.name + "_o", bits, true, p.type + " " + p.name + " as the call left it");
    } else {
      if (types.structs.count(p.type)) ip.structs.insert(p.type);
      add(p.name, bits, false, p.type + " " + p.name);
    }
  }
  ip.end = next;
  return ip;
}

long pointerBitsOf(const std::string& hlsTcl, const std::string& path) {
  const std::string t = tessera::readTextFile(hlsTcl);
  if (t.find("-m_axi_addr64=false") != std::string::npos) return 32;
  if (t.find("-m_axi_addr64") == std::string::npos || t.find("-m_axi_addr64=true") != std::string::npos) return 64;
  throw Error(path, "cannot tell from config_interface -m_axi_addr64 whether pointers are 32 or 64 bits");
}

std::string header(const std::vector<Ip>& ips, const Types& types) {
  std::ostringstream o;
  o << "// Generated by tessera-hls-map-gen from hls/design and scripts/fpga/hls.tcl: the HLS bitstream's register map.\n"
       "#pragma once\n\n#include <cstdint>\n\nnamespace tessera::hls_map {\n\n"
       "// Each stage IP's AXI4-Lite window, in this order at this stride from the HLS register window's base.\n"
       "enum Ip { kFetch = 0, kLoad = 1, kCompute = 2, kStore = 3, kNumIps = 4 };\n"
       "inline constexpr const char* kIpNames[kNumIps] = {\"fetch\", \"load\", \"compute\", \"store\"};\n"
       "inline constexpr uint32_t kIpStride = 0x10000;\n\n"
       "// Vitis ap_ctrl_hs control register and its bits.\n"
       "inline constexpr uint32_t kApCtrl = 0x00;\n"
       "inline constexpr uint32_t kApStart = 1u << 0, kApDone = 1u << 1, kApIdle = 1u << 2, kApReady = 1u << 3,\n"
       "                          kAutoRestart = 1u << 7;\n\n";
  for (const Ip& ip : ips) {
    o << "namespace " << ip.stage << " {\n";
    for (const Group& g : ip.groups) {
      o << "inline constexpr uint32_t " << camel(g.name) << " = " << offsetText(g.offset) << ";  // " << g.bits << " bits, "
        << (g.output ? "read" : "write") << "\n";
      o << "inline constexpr uint32_t " << camel(g.name) << "Bits = " << g.bits << ";\n";
      if (g.valid) o << "inline constexpr uint32_t " << camel(g.name) << "Valid = " << offsetText(g.offset + 4 * ((g.bits + 31) / 32)) << ";\n";
    }
    o << "inline constexpr uint32_t kEnd = " << offsetText(ip.end) << ";  // first offset past the arguments\n";
    o << "}  // namespace " << ip.stage << "\n\n";
  }
  // Field positions inside the aggregated structs that cross the bus.
  std::set<std::string> structs;
  for (const Ip& ip : ips) structs.insert(ip.structs.begin(), ip.structs.end());
  for (const std::string& s : structs) {
    const auto it = types.structs.find(s);
    std::string ns = s;
    ns = ns.substr(0, ns.size() - 2);
    o << "// " << s << " aggregated: each member's lowest bit and width.\nnamespace " << ns << " {\n";
    long lsb = 0;
    for (const auto& [type, name] : it->second) {
      const long w = types.bits(type);
      o << "inline constexpr uint32_t " << camel(name) << "Lsb = " << lsb << ", " << camel(name) << "Bits = " << w << ";\n";
      lsb += w;
    }
    o << "inline constexpr uint32_t kBits = " << lsb << ";\n}  // namespace " << ns << "\n\n";
  }
  o << "}  // namespace tessera::hls_map\n";
  return o.str();
}

std::string docs(const std::vector<Ip>& ips) {
  std::ostringstream o;
  o << "| IP | offset | register | bits | access | what |\n|---|---|---|---|---|---|\n";
  for (const Ip& ip : ips) {
    o << "| " << ip.stage << " | 0x00 | AP_CTRL | 32 | read/write | ap_start (0), ap_done (1), ap_idle (2), ap_ready (3), auto_restart (7) |\n";
    for (const Group& g : ip.groups) {
      o << "| " << ip.stage << " | " << offsetText(g.offset) << " | " << g.name << " | " << g.bits << " | "
        << (g.output ? "read" : "write") << " | " << g.what << " |\n";
      if (g.valid)
        o << "| " << ip.stage << " | " << offsetText(g.offset + 4 * static_cast<uint32_t>((g.bits + 31) / 32)) << " | " << g.name
          << "_ap_vld | 1 | read | " << g.name << " was written by the last call |\n";
    }
  }
  return o.str();
}

int usage() {
  std::fprintf(stderr,
               "usage: tessera-hls-map-gen --design-cpp tessera_hls.cpp --design-h tessera_hls.h --hls-config hls_config.h\n"
               "                           --hls-tcl hls.tcl [--cpp OUT.h] [--md OUT.md]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::map<std::string, std::string> a;
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    if (k == "--help" || k == "-h") { usage(); return 0; }
    if (i + 1 >= argc || k.rfind("--", 0) != 0) return usage();
    a[k] = argv[++i];
  }
  for (const char* k : {"--design-cpp", "--design-h", "--hls-config", "--hls-tcl"})
    if (!a.count(k)) {
      std::fprintf(stderr, "tessera-hls-map-gen: %s is required\n", k);
      return usage();
    }
  try {
    const Types types = readTypes(a["--design-h"], a["--hls-config"]);
    const std::string source = tessera::readTextFile(a["--design-cpp"]);
    const long pointerBits = pointerBitsOf(a["--hls-tcl"], a["--hls-tcl"]);
    std::vector<Ip> ips;
    for (const char* s : kStages) ips.push_back(layout(s, source, a["--design-cpp"], types, pointerBits));
    if (a.count("--cpp")) writeIfChanged(a["--cpp"], header(ips, types));
    if (a.count("--md")) writeIfChanged(a["--md"], docs(ips));
  } catch (const Error& e) {
    std::fprintf(stderr, "tessera-hls-map-gen: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
