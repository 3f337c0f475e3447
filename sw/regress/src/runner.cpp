// Runs programs on several targets, compares their DRAM, shrinks failures and drives the regression.
#include "tessera/regress/runner.h"

#include <algorithm>
#include <chrono>
#include <cctype>
#include <climits>
#include <cstdio>
#include <set>

#include "tessera/support/error.h"
#include "tessera/regress/check.h"
#include "tessera/regress/reproducer.h"
#include "tessera/runtime/remote.h"
#include "tessera/support/format.h"

namespace tessera::regress {

namespace {

std::string byteText(uint8_t b) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%02x (%d)", b, static_cast<int>(static_cast<int8_t>(b)));
  return buf;
}

double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

namespace {

// A target with a deliberate fault after its run, for testing the regression harness itself
// (parseTargetSpec's fault=flip-stored-byte): bit 6 of the first byte the stream's last STORE
// wrote is flipped, so the disagreement lasts exactly as long as the program stores something.
class FlipStoredByteTarget : public runtime::Target {
 public:
  FlipStoredByteTarget(std::unique_ptr<runtime::Target> inner, const hw::Config& cfg, hw::Dram& dram)
      : inner_(std::move(inner)), cfg_(cfg), dram_(dram) {}
  std::string name() const override { return inner_->name(); }
  hw::Counters counters() const override { return inner_->counters(); }
  void resetCounters() override { inner_->resetCounters(); }
  std::string variant() const override { return inner_->variant(); }
  void run(uint64_t insnPhys, uint32_t count, uint32_t waitCycles) override {
    inner_->run(insnPhys, count, waitCycles);
    const hw::Isa isa(cfg_);
    for (uint32_t i = count; i-- > 0;) {
      const hw::Insn in = isa.decode(hw::Isa::rawFromBytes(dram_.at(insnPhys + 16ull * i, 16, "fault injection")));
      if (in.opcode != hw::Opcode::kStore || in.isNop()) continue;
      *dram_.at(uint64_t(in.dramBase) * uint64_t(cfg_.outElemBytes), 1, "fault injection") ^= 0x40;
      return;
    }
  }

 private:
  std::unique_ptr<runtime::Target> inner_;
  hw::Config cfg_;
  hw::Dram& dram_;
};

}  // namespace

TargetSpec parseTargetSpec(const std::string& text) {
  // A remote target's name holds colons of its own (remote:HOST:PORT/T); its options follow it.
  const size_t remoteLength = runtime::remote::remoteNameLength(text);
  const auto colon = remoteLength ? (remoteLength < text.size() ? remoteLength : std::string::npos) : text.find(':');
  const std::string name = text.substr(0, colon);
  runtime::findTarget(name);  // throws, listing the built targets, if there is none of that name
  runtime::TargetOptions options;
  std::string fault;
  bool exactCounters = false;
  for (size_t pos = colon; pos != std::string::npos && pos < text.size();) {
    const size_t next = text.find(':', pos + 1);
    const std::string item = text.substr(pos + 1, next == std::string::npos ? std::string::npos : next - pos - 1);
    pos = next;
    const size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0)
      throw Error("target '" + text + "'", "option '" + item + "' is not KEY=VALUE (expected NAME:key=value:key=value)");
    if (item.substr(0, eq) == "fault") {
      fault = item.substr(eq + 1);
      if (fault != "flip-stored-byte")
        throw Error("target '" + text + "'", "fault '" + fault + "' is unknown (the one fault is flip-stored-byte)");
      continue;
    }
    if (item.substr(0, eq) == "counters") {
      if (item.substr(eq + 1) != "exact")
        throw Error("target '" + text + "'", "counters '" + item.substr(eq + 1) + "' is unknown (the one value is exact)");
      exactCounters = true;
      continue;
    }
    options[item.substr(0, eq)] = item.substr(eq + 1);
  }
  TargetSpec spec;
  spec.label = text;
  spec.exactCounters = exactCounters;
  spec.create = [name, options, fault](const hw::Config& cfg, hw::Dram& dram) {
    std::unique_ptr<runtime::Target> t = runtime::createTarget(name, cfg, dram, options);
    if (!fault.empty()) t.reset(new FlipStoredByteTarget(std::move(t), cfg, dram));
    return t;
  };
  return spec;
}

std::vector<TargetSpec> parseTargetList(const std::string& text) {
  std::vector<TargetSpec> specs;
  size_t start = 0;
  for (;;) {
    const size_t comma = text.find(',', start);
    const std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (item.empty()) throw Error("targets '" + text + "'", "empty target name");
    specs.push_back(parseTargetSpec(item));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (specs.size() < 2) throw Error("targets '" + text + "'", "give at least two targets to compare");
  if (specs[0].exactCounters)
    throw Error("targets '" + text + "'", "counters=exact on the first target: it compares a target's counters with an "
                                          "earlier one's, and the first has none before it");
  return specs;
}

Outcome execute(const Program& p, const TargetSpec& target, bool traceSpans) {
  Outcome o;
  hw::Dram dram(p.cfg);
  for (const auto& r : p.regions) dram.write(r.base, r.init.data(), r.init.size(), "region " + r.name);
  const uint64_t watchdog = std::min<uint64_t>(UINT32_MAX, std::max<uint64_t>(1000000, 50 * estimateCycles(p.cfg, p.insns)));
  std::unique_ptr<runtime::Target> t;
  const auto t0 = std::chrono::steady_clock::now();
  try {
    t = target.create(p.cfg, dram);
    if (traceSpans) o.traced = t->traceInstructions(true);
    t->run(p.insnBase(), p.insnCount(), static_cast<uint32_t>(watchdog));
    if (o.traced) o.spans = t->takeInstructionSpans();
  } catch (const std::exception& e) {
    o.failed = true;
    o.error = e.what();
  }
  o.seconds = since(t0);
  if (t) o.counters = t->counters();
  for (const auto& r : p.regions) {
    o.regions.emplace_back(r.init.size());
    dram.read(r.base, o.regions.back().data(), r.init.size(), "region " + r.name);
  }
  return o;
}

namespace {

// Which STORE wrote `addr`, as "instruction N (STORE) row y, element x, lane l ...".
std::string storeOf(const Program& p, uint64_t addr) {
  const uint64_t eb = static_cast<uint64_t>(p.cfg.outElemBytes);
  for (size_t i = 0; i < p.insns.size(); ++i) {
    const hw::Insn& in = p.insns[i];
    if (in.opcode != hw::Opcode::kStore || in.isNop()) continue;
    for (uint32_t y = 0; y < in.ySize; ++y) {
      const uint64_t lo = (uint64_t(in.dramBase) + uint64_t(y) * in.xStride) * eb;
      if (addr < lo || addr >= lo + uint64_t(in.xSize) * eb) continue;
      const uint64_t x = (addr - lo) / eb, lane = (addr - lo) % eb;
      return "instruction " + std::to_string(i) + " (STORE) row " + std::to_string(y) + ", element " +
             std::to_string(x) + ", lane " + std::to_string(lane) + " (batch " +
             std::to_string(lane / p.cfg.blockOut) + ", output " + std::to_string(lane % p.cfg.blockOut) +
             ") from accumulator entry " + std::to_string(uint64_t(in.sramBase) + uint64_t(y) * in.xSize + x);
    }
  }
  return "";
}

}  // namespace

namespace {

// counters=exact, once the counters agree: target t's instruction spans against reference r's,
// when both recorded them; the first span that differs is reported.
std::optional<Mismatch> compareSpans(const std::vector<TargetSpec>& targets, const std::vector<Outcome>& outcomes,
                                     size_t r, size_t t) {
  const Outcome &a = outcomes[r], &b = outcomes[t];
  if (!a.traced || !b.traced) return std::nullopt;
  auto spanText = [](const hw::InsnSpan& s) {
    return "instruction " + std::to_string(s.insn) + " on trace unit " + std::to_string(s.unit) + " cycles [" +
           std::to_string(s.begin) + ", " + std::to_string(s.end) + ")";
  };
  std::string first;
  if (a.spans.size() != b.spans.size()) {
    first = std::to_string(a.spans.size()) + " traced runs against " + std::to_string(b.spans.size());
  } else {
    for (size_t k = 0; k < a.spans.size() && first.empty(); ++k) {
      const auto &x = a.spans[k].spans, &y = b.spans[k].spans;
      for (size_t i = 0; i < std::max(x.size(), y.size()) && first.empty(); ++i) {
        if (i < x.size() && i < y.size() && x[i] == y[i]) continue;
        first = (i < x.size() ? spanText(x[i]) : std::string("no span")) + " against " +
                (i < y.size() ? spanText(y[i]) : std::string("no span"));
      }
    }
  }
  if (first.empty()) return std::nullopt;
  Mismatch m;
  m.target = targets[t].label;
  m.summary = targets[r].label + " and " + targets[t].label + " report different instruction spans: " + first;
  m.firstDifference = "instruction spans differ: " + first;
  m.detail = "  " + first + " (the first span, by unit, begin cycle and instruction, that differs)\n";
  return m;
}

// counters=exact: target t's counters against those of the nearest earlier target that counts
// cycles, line by line as Counters::format prints them, the first differing line reported.
std::optional<Mismatch> compareCounters(const std::vector<TargetSpec>& targets, const std::vector<Outcome>& outcomes,
                                        size_t t) {
  size_t r = t;
  while (r-- > 0)
    if (!outcomes[r].failed && outcomes[r].counters.cycles) break;
  Mismatch m;
  m.target = targets[t].label;
  if (r == SIZE_MAX) {
    m.summary = targets[t].label + " has counters=exact but no earlier target counted cycles";
    m.firstDifference = m.summary;
    m.detail = "  put a cycle-accurate target (tsim, rtl-sc, gls) before it in the list\n";
    return m;
  }
  const std::string a = outcomes[r].counters.format(), b = outcomes[t].counters.format();
  if (a == b) return compareSpans(targets, outcomes, r, t);
  size_t pa = 0, pb = 0;
  std::string la, lb, section;
  for (;;) {
    const size_t ea = a.find('\n', pa), eb = b.find('\n', pb);
    la = a.substr(pa, ea == std::string::npos ? std::string::npos : ea - pa);
    lb = b.substr(pb, eb == std::string::npos ? std::string::npos : eb - pb);
    if (la != lb || ea == std::string::npos || eb == std::string::npos) break;
    if (!la.empty() && la[0] != ' ') section = la.substr(0, la.find(':'));
    pa = ea + 1;
    pb = eb + 1;
  }
  auto trim = [](std::string x) {
    x.erase(0, x.find_first_not_of(' '));
    while (x.find("  ") != std::string::npos) x.erase(x.find("  "), 1);
    return x;
  };
  m.summary = targets[r].label + " and " + targets[t].label + " report different counters (" + section + "): " +
              trim(la) + " against " + trim(lb);
  m.firstDifference = "counters differ (" + section + "): " + targets[r].label + " " + trim(la) + ", " +
                      targets[t].label + " " + trim(lb);
  m.detail = "  " + targets[r].label + ":\n" + a + "  " + targets[t].label + ":\n" + b;
  return m;
}

}  // namespace

std::optional<Mismatch> compare(const Program& p, const std::vector<TargetSpec>& targets,
                                const std::vector<Outcome>& outcomes) {
  bool allFailed = true;
  for (const auto& o : outcomes) allFailed &= o.failed;
  if (allFailed) {
    Mismatch m;
    m.allFailed = true;
    m.summary = "every target failed";
    m.firstDifference = "every target failed: " + targets[0].label + ": " + outcomes[0].error;
    for (size_t t = 0; t < targets.size(); ++t) m.detail += "  " + targets[t].label + ": " + outcomes[t].error + "\n";
    return m;
  }
  const Outcome& a = outcomes[0];
  const std::string& la = targets[0].label;
  for (size_t t = 1; t < outcomes.size(); ++t) {
    const Outcome& b = outcomes[t];
    const std::string& lb = targets[t].label;
    if (a.failed != b.failed) {
      Mismatch m;
      const std::string& bad = a.failed ? la : lb;
      const std::string& good = a.failed ? lb : la;
      m.summary = bad + " failed where " + good + " completed";
      m.detail = "  " + bad + ": " + (a.failed ? a.error : b.error) + "\n  " + good + ": completed without error\n";
      m.target = lb;
      m.firstDifference = bad + " failed: " + (a.failed ? a.error : b.error);
      return m;
    }
    if (a.failed) continue;  // both failed: their messages may legitimately differ
    uint64_t differing = 0;
    std::string first, firstLine;
    for (size_t r = 0; r < p.regions.size(); ++r) {
      const auto &x = a.regions[r], &y = b.regions[r];
      uint64_t here = 0;
      size_t firstAt = 0;
      for (size_t k = 0; k < x.size(); ++k)
        if (x[k] != y[k] && here++ == 0) firstAt = k;
      if (here && first.empty()) {
        const Region& reg = p.regions[r];
        const uint64_t addr = reg.base + firstAt;
        const std::string store = storeOf(p, addr);
        first = "  first difference at " + hex(addr) + " (region " + reg.name + " + " + hex(firstAt) + ", " +
                regionKindName(reg.kind) + "): " +
                (store.empty() ? std::string("no STORE of the program writes this byte") : "written by " + store) +
                "\n  " + la + ": " + byteText(x[firstAt]) + ", " + lb + ": " + byteText(y[firstAt]) +
                ", before the run: " + byteText(reg.init[firstAt]) + "\n";
        first += "  " + std::to_string(here) + " byte(s) differ in region " + reg.name + "\n";
        firstLine = "first difference at " + hex(addr) + " (region " + reg.name + "): " + la + " " +
                    byteText(x[firstAt]) + ", " + lb + " " + byteText(y[firstAt]);
      }
      differing += here;
    }
    if (differing) {
      Mismatch m;
      m.summary = la + " and " + lb + " leave different DRAM: " + std::to_string(differing) + " byte(s) differ";
      m.detail = first;
      m.target = lb;
      m.firstDifference = firstLine;
      return m;
    }
    if (targets[t].exactCounters) {
      if (std::optional<Mismatch> m = compareCounters(targets, outcomes, t)) return m;
    }
  }
  return std::nullopt;
}

Trial runTrial(const Program& p, const std::vector<TargetSpec>& targets) {
  Trial t;
  // Spans are recorded only when a counters=exact target will compare them.
  const bool spans = std::any_of(targets.begin(), targets.end(), [](const TargetSpec& s) { return s.exactCounters; });
  for (const auto& spec : targets) t.outcomes.push_back(execute(p, spec, spans));
  t.mismatch = compare(p, targets, t.outcomes);
  return t;
}

namespace {

// Zeller's ddmin: a 1-minimal subset of `items` for which `fails` holds (it holds for all of
// them). The empty set is tried first: dropping everything is the common case for extra orderings.
template <typename T, typename F>
std::vector<T> ddmin(std::vector<T> items, F fails) {
  if (items.empty() || fails(std::vector<T>{})) return {};
  size_t n = 2;
  while (items.size() >= 2) {
    const size_t chunk = (items.size() + n - 1) / n;
    std::vector<std::vector<T>> parts;
    for (size_t i = 0; i < items.size(); i += chunk)
      parts.emplace_back(items.begin() + static_cast<long>(i),
                         items.begin() + static_cast<long>(std::min(items.size(), i + chunk)));
    bool reduced = false;
    for (const auto& part : parts)
      if (fails(part)) {
        items = part;
        n = 2;
        reduced = true;
        break;
      }
    // With two parts each complement is the other part, already tried.
    for (size_t k = 0; !reduced && parts.size() > 2 && k < parts.size(); ++k) {
      std::vector<T> rest;
      for (size_t j = 0; j < parts.size(); ++j)
        if (j != k) rest.insert(rest.end(), parts[j].begin(), parts[j].end());
      if (fails(rest)) {
        items = rest;
        n = std::max<size_t>(n - 1, 2);
        reduced = true;
      }
    }
    if (!reduced) {
      if (n >= items.size()) break;
      n = std::min(items.size(), 2 * n);
    }
  }
  return items;
}

// Simpler variants of one instruction, tried in turn by the shrinker. Each is strictly smaller
// (fewer rows, columns, iterations or micro-ops; no padding; zero factors), so repeating them ends.
std::vector<hw::Insn> simplifications(const hw::Insn& in) {
  std::vector<hw::Insn> out;
  auto with = [&](auto change) {
    hw::Insn c = in;
    change(c);
    if (c != in) out.push_back(c);
  };
  if (in.opcode == hw::Opcode::kGemm || in.opcode == hw::Opcode::kAlu) {
    with([](hw::Insn& c) { c.iterOut = std::min(c.iterOut, 1u); });
    with([](hw::Insn& c) { c.iterIn = std::min(c.iterIn, 1u); });
    with([](hw::Insn& c) { c.iterOut = (c.iterOut + 1) / 2; });
    with([](hw::Insn& c) { c.iterIn = (c.iterIn + 1) / 2; });
    with([](hw::Insn& c) { if (c.uopEnd > c.uopBgn + 1) c.uopEnd = c.uopBgn + 1; });
    with([](hw::Insn& c) { if (c.uopEnd > c.uopBgn + 1) c.uopBgn = c.uopEnd - 1; });
    with([](hw::Insn& c) { if (c.uopEnd > c.uopBgn + 1) c.uopEnd = c.uopBgn + (c.uopEnd - c.uopBgn) / 2; });
    with([](hw::Insn& c) { if (c.uopEnd > c.uopBgn + 1) c.uopBgn = c.uopBgn + (c.uopEnd - c.uopBgn) / 2; });
    with([](hw::Insn& c) { c.dstFactorOut = c.srcFactorOut = c.wgtFactorOut = 0; });
    with([](hw::Insn& c) { c.dstFactorIn = c.srcFactorIn = c.wgtFactorIn = 0; });
  } else if (in.isMem() && !in.isNop()) {
    const bool store = in.opcode == hw::Opcode::kStore;
    // The first or the second half of the rows; for one-row transfers, of the columns (a STORE
    // reads row y from accumulator entries sram_base + y * x_size, so only then do the SRAM and
    // DRAM sides stay aligned).
    with([](hw::Insn& c) { if (c.ySize > 1) c.ySize /= 2; });
    if (store || in.yPad0 + in.yPad1 == 0)
      with([&](hw::Insn& c) {
        if (c.ySize < 2) return;
        const uint32_t k = c.ySize / 2;
        const uint32_t width = c.xPad0 + c.xSize + c.xPad1;
        c.sramBase += k * width;
        c.dramBase += k * c.xStride;
        c.ySize -= k;
      });
    if (in.ySize == 1 && in.xPad0 + in.xPad1 == 0) {
      with([](hw::Insn& c) { if (c.xSize > 1) c.xSize /= 2; });
      with([](hw::Insn& c) {
        if (c.xSize < 2) return;
        const uint32_t k = c.xSize / 2;
        c.sramBase += k;
        c.dramBase += k;
        c.xSize -= k;
      });
    }
    with([](hw::Insn& c) { c.ySize = std::min(c.ySize, 1u); });
    with([](hw::Insn& c) { c.xSize = 1; });
    with([](hw::Insn& c) { c.yPad0 = c.yPad1 = c.xPad0 = c.xPad1 = 0; });
  }
  return out;
}

}  // namespace

ShrinkResult shrink(const Program& failing, const std::vector<TargetSpec>& targets, size_t maxCandidates) {
  ShrinkResult res;
  res.program = failing;
  const Trial first = runTrial(failing, targets);
  if (!first.mismatch) throw Error("shrink of seed " + std::to_string(failing.seed), "the program does not fail");
  res.mismatch = *first.mismatch;
  const bool wantAllFailed = first.mismatch->allFailed;

  // A candidate is kept only if it is valid (so a shrunk failure never comes from a race the
  // shrinking introduced) and fails the same way.
  auto test = [&](Program cand) {
    if (res.candidates >= maxCandidates) return false;
    try {
      lower(cand);
      checkProgram(cand);
    } catch (const Error&) {
      return false;
    }
    ++res.candidates;
    Trial t = runTrial(cand, targets);
    if (!t.mismatch || t.mismatch->allFailed != wantAllFailed) return false;
    ++res.accepted;
    res.program = std::move(cand);
    res.mismatch = *t.mismatch;
    return true;
  };

  // Blocks.
  {
    const Program base = res.program;
    std::set<uint32_t> ids;
    for (const auto& op : base.ops) ids.insert(op.block);
    ddmin(std::vector<uint32_t>(ids.begin(), ids.end()), [&](const std::vector<uint32_t>& keep) {
      Program c = base;
      const std::set<uint32_t> k(keep.begin(), keep.end());
      c.ops.erase(std::remove_if(c.ops.begin(), c.ops.end(), [&](const Op& op) { return !k.count(op.block); }),
                  c.ops.end());
      return test(std::move(c));
    });
  }
  if (res.program.extraTokenPercent) {
    Program c = res.program;
    c.extraTokenPercent = 0;
    test(std::move(c));
  }
  for (int round = 0; round < 8; ++round) {
    const size_t before = res.program.ops.size() + res.program.edges.size();
    // Extra orderings.
    {
      const Program base = res.program;
      std::vector<size_t> idx(base.edges.size());
      for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
      if (!idx.empty())
        ddmin(idx, [&](const std::vector<size_t>& keep) {
          Program c = base;
          c.edges.clear();
          for (size_t i : keep) c.edges.push_back(base.edges[i]);
          return test(std::move(c));
        });
    }
    // Single instructions.
    {
      const Program base = res.program;
      std::vector<size_t> idx(base.ops.size());
      for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
      ddmin(idx, [&](const std::vector<size_t>& keep) {
        Program c = base;
        c.ops.clear();
        for (size_t i : keep) c.ops.push_back(base.ops[i]);
        return test(std::move(c));
      });
    }
    // Simpler instructions: each op until none of its variants still fails.
    bool simplified = false;
    for (size_t i = 0; i < res.program.ops.size(); ++i)
      for (bool again = true; again;) {
        again = false;
        for (const hw::Insn& s : simplifications(res.program.ops[i].insn)) {
          Program c = res.program;
          c.ops[i].insn = s;
          if (test(std::move(c))) {
            simplified = again = true;
            break;
          }
        }
      }
    if (!simplified && res.program.ops.size() + res.program.edges.size() == before) break;
  }
  return res;
}

namespace {

std::string configText(const hw::Config& cfg) {
  std::string s = cfg.name + " (" + std::to_string(cfg.batch) + "x" + std::to_string(cfg.blockIn) + "x" +
                  std::to_string(cfg.blockOut) + ")";
  const std::string shipped = hw::shippedConfigJson(cfg.name);
  bool same = false;
  if (!shipped.empty()) {
    try {
      same = hw::Config::fromJson(shipped, cfg.name).toJson() == cfg.toJson();
    } catch (const Error&) {
    }
  }
  if (!same) s += ", not a shipped config:\n" + cfg.toJson();
  return s;
}

}  // namespace

uint64_t shardPrograms(uint64_t programs, uint64_t index, uint64_t count) {
  return index < programs ? (programs - index - 1) / count + 1 : 0;
}

RegressSummary runRegression(const RegressOptions& o, std::ostream& out) {
  if (o.shardCount == 0 || o.shardIndex >= o.shardCount)
    throw Error("shard " + std::to_string(o.shardIndex) + "/" + std::to_string(o.shardCount),
                "the index must be below the count");
  RegressSummary sum;
  sum.planned = shardPrograms(o.programs, o.shardIndex, o.shardCount);
  sum.cycles.assign(o.targets.size(), 0);
  sum.targetSeconds.assign(o.targets.size(), 0);
  sum.results.resize(sum.planned);
  for (uint64_t j = 0; j < sum.planned; ++j) sum.results[j].seed = o.seed + o.shardIndex + j * o.shardCount;
  std::string labels;
  for (const auto& t : o.targets) labels += (labels.empty() ? "" : ",") + t.label;
  const auto t0 = std::chrono::steady_clock::now();
  const int width = static_cast<int>(std::to_string(sum.planned).size());
  char line[512];

  // Saves the failing program (shrunk when it was) as a reproducer, cut to the DRAM pages it
  // touches if it still fails so; a failure to write is reported, never fatal to the run.
  auto saveReproducer = [&](const Program& failing, const Mismatch& m, size_t originalInsns, ProgramResult& res) {
    if (o.reproducerDir.empty()) return;
    Program keep = failing;
    Mismatch why = m;
    try {
      Program trimmed = withTouchedPagesOnly(failing);
      size_t before = 0, after = 0;
      for (const Region& r : failing.regions) before += r.init.size();
      for (const Region& r : trimmed.regions) after += r.init.size();
      if (after < before) {
        checkProgram(trimmed);
        const Trial again = runTrial(trimmed, o.targets);
        if (again.mismatch && again.mismatch->allFailed == m.allFailed) {
          keep = std::move(trimmed);
          why = *again.mismatch;
        }
      }
    } catch (const Error&) {
      // Keep every region: the untrimmed program is known to fail.
    }
    std::string stem = o.cfg.name + "-" + sizeName(o.size) + "-seed" + std::to_string(failing.seed);
    // A config's NAME is free text; the file name keeps only what is safe in any path.
    for (char& c : stem)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') c = '_';
    try {
      res.reproducer = writeReproducerFile(o.reproducerDir, stem, formatReproducer(keep, labels, why, originalInsns));
      out << "reproducer: " << res.reproducer << " (" << keep.insns.size() << " instructions, " << keep.regions.size()
          << " regions; replay with: tessera sim --repro " << res.reproducer << ")\n";
    } catch (const Error& e) {
      out << "reproducer NOT written: " << e.what() << "\n";
    }
    out << std::flush;
  };

  for (uint64_t j = 0; j < sum.planned; ++j) {
    if (o.stopRequested && o.stopRequested()) {
      sum.stopped = true;
      out << "regress: stopped on request after " << j << " of " << sum.planned << " programs\n";
      break;
    }
    ProgramResult& res = sum.results[j];
    const uint64_t seed = res.seed;
    const auto p0 = std::chrono::steady_clock::now();
    ++sum.programs;
    std::snprintf(line, sizeof line, "[%*llu/%llu] seed %llu: ", width, static_cast<unsigned long long>(j + 1),
                  static_cast<unsigned long long>(sum.planned), static_cast<unsigned long long>(seed));
    const std::string head = line;
    const std::string repro = o.reproduce + " --seed " + std::to_string(seed) + " --programs 1";
    Program p;
    bool generated = false;
    try {
      p = generate(o.cfg, seed, o.size);
      generated = true;
      checkProgram(p);
    } catch (const Error& e) {
      // The generator promises valid programs; an invalid one is a bug of the generator (or of the
      // checker), never of a target, and is reported as such.
      out << head << "GENERATOR ERROR: " << e.what() << "\n  reproduce: " << repro << "\n";
      if (generated) out << listing(p);
      out << std::flush;
      ++sum.failures;
      sum.failingSeeds.push_back(seed);
      res.status = ProgramResult::Status::kGeneratorError;
      res.message = "seed " + std::to_string(seed) + ", config " + o.cfg.name + ": generator error: " + e.what();
      res.detail = res.message + "\nreproduce: " + repro + "\n";
      res.seconds = since(p0);
      if (o.onProgram) o.onProgram(res, sum);
      if (!o.keepGoing) break;
      continue;
    }
    if (o.printProgram) out << listing(p);
    Trial trial = runTrial(p, o.targets);
    std::string status = head + std::to_string(p.insns.size()) + " insns (" + std::to_string(workInstructions(p)) +
                         " work), ~" + std::to_string(estimateCycles(p.cfg, p.insns)) + " cycles";
    for (size_t t = 0; t < o.targets.size(); ++t) {
      const Outcome& oc = trial.outcomes[t];
      sum.cycles[t] += oc.counters.cycles;
      sum.targetSeconds[t] += oc.seconds;
      std::snprintf(line, sizeof line, " | %s %.2f ms", o.targets[t].label.c_str(), oc.seconds * 1e3);
      status += line;
      if (oc.counters.cycles) status += " " + std::to_string(oc.counters.cycles) + " cycles";
      if (oc.failed) status += " FAILED";
    }
    if (!trial.mismatch) {
      if (!o.quiet) out << status << " | ok\n" << std::flush;
      res.status = ProgramResult::Status::kOk;
      res.seconds = since(p0);
      if (o.onProgram) o.onProgram(res, sum);
      continue;
    }
    const Mismatch& m = *trial.mismatch;
    ++sum.failures;
    sum.failingSeeds.push_back(seed);
    res.status = ProgramResult::Status::kMismatch;
    res.target = m.target;
    res.message = "seed " + std::to_string(seed) + ", config " + o.cfg.name + ", target " +
                  (m.target.empty() ? labels : m.target) + ": " + m.summary + "; " + m.firstDifference;
    const std::string report = "MISMATCH seed " + std::to_string(seed) + ", config " + configText(o.cfg) + ", size " +
                               sizeName(o.size) + ", targets " + labels + ": " + m.summary + "\n" + m.detail +
                               "  reproduce: " + repro + "\n";
    res.detail = report;
    out << status << " | MISMATCH\n" << report << listing(p) << std::flush;
    if (o.shrink) {
      out << "shrinking seed " << seed << "...\n" << std::flush;
      const auto s0 = std::chrono::steady_clock::now();
      ShrinkResult s = shrink(p, o.targets, o.maxShrinkCandidates);
      std::snprintf(line, sizeof line, "shrunk seed %llu from %zu to %zu instructions (%zu doing work) in %zu runs, %.1f s: ",
                    static_cast<unsigned long long>(seed), p.insns.size(), s.program.insns.size(),
                    workInstructions(s.program), s.candidates, since(s0));
      out << line << s.mismatch.summary << "\n" << s.mismatch.detail << listing(s.program) << std::flush;
      res.detail += std::string(line) + s.mismatch.summary + "\n" + s.mismatch.detail;
      saveReproducer(s.program, s.mismatch, p.insns.size(), res);
    } else {
      saveReproducer(p, m, p.insns.size(), res);
    }
    if (!res.reproducer.empty()) res.detail += "reproducer: " + res.reproducer + "\n";
    res.seconds = since(p0);
    if (o.onProgram) o.onProgram(res, sum);
    if (!o.keepGoing) break;
  }

  sum.seconds = since(t0);
  std::string shard;
  if (o.shardCount > 1)
    shard = ", shard " + std::to_string(o.shardIndex) + "/" + std::to_string(o.shardCount) + " (" +
            std::to_string(sum.planned) + " of " + std::to_string(o.programs) + " programs)";
  std::snprintf(line, sizeof line, "regress: %llu programs in %.2f s (%.1f programs/s), config %s, size %s, targets %s",
                static_cast<unsigned long long>(sum.programs), sum.seconds,
                sum.seconds > 0 ? sum.programs / sum.seconds : 0.0, o.cfg.name.c_str(), sizeName(o.size), labels.c_str());
  out << line << shard;
  for (size_t t = 0; t < o.targets.size(); ++t)
    if (sum.cycles[t]) {
      std::snprintf(line, sizeof line, "; %s simulated %llu cycles in %.2f s (%.0f cycles/s)", o.targets[t].label.c_str(),
                    static_cast<unsigned long long>(sum.cycles[t]), sum.targetSeconds[t],
                    sum.targetSeconds[t] > 0 ? sum.cycles[t] / sum.targetSeconds[t] : 0.0);
      out << line;
    }
  out << "; " << sum.failures << (sum.failures == 1 ? " mismatch" : " mismatches");
  if (!sum.failingSeeds.empty()) {
    out << " (seeds";
    for (uint64_t s : sum.failingSeeds) out << " " << s;
    out << ")";
  }
  out << "\n" << std::flush;
  return sum;
}

}  // namespace tessera::regress
