// The Chrome trace-event file of a run: the layers on one track, and each segment run's instructions on a track per unit.
#include <algorithm>
#include <cstdio>

#include "tessera/compiler/model/chrome_trace.h"
#include "tessera/gen/host_interface.h"
#include "tessera/hw/asm.h"
#include "tessera/support/error.h"

namespace tessera::compiler::model {

std::string chromeTrace(const CompiledModel& m, const ModelRunResult& r, double clockMhz) {
  // Hand-written JSON: names are escaped; numbers are plain.
  auto escape = [](const std::string& s) {
    std::string o;
    for (char c : s) {
      if (c == '"' || c == '\\') o += '\\';
      if (static_cast<unsigned char>(c) < 0x20) continue;
      o += c;
    }
    return o;
  };
  auto micros = [](double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.6f", v);
    return std::string(buf);
  };
  auto meta = [&](const char* what, int pid, int tid, const std::string& args) {
    return ",{\"name\":\"" + std::string(what) + "\",\"ph\":\"M\",\"pid\":" + std::to_string(pid) +
           (tid ? ",\"tid\":" + std::to_string(tid) : std::string()) + ",\"args\":{" + args + "}}";
  };
  std::string events = "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":1,\"args\":{\"name\":\"layers\"}}";
  events += meta("process_name", 1, 0, "\"name\":\"layers (each accelerator layer's instructions run alone)\"");
  events += meta("process_sort_index", 1, 0, "\"sort_index\":0");
  double at = 0;
  std::vector<double> layerStart(m.layers.size(), 0);
  for (size_t i = 0; i < m.layers.size() && i < r.layers.size(); ++i) {
    const LayerInfo& l = m.layers[i];
    const double dur = l.onAccelerator ? double(r.layers[i].cycles) / clockMhz : r.layers[i].hostMicros;
    layerStart[i] = at;
    events += ",{\"name\":\"" + escape(l.name) + "\",\"cat\":\"" + (l.onAccelerator ? "accelerator" : "host") +
              "\",\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":" + micros(at) + ",\"dur\":" + micros(dur) +
              ",\"args\":{\"op\":\"" + escape(l.kind) + "\",\"macs\":" + std::to_string(l.macs) +
              ",\"cycles\":" + std::to_string(l.onAccelerator ? r.layers[i].cycles : 0) + "}}";
    at += dur;
  }

  // One process per segment run: its whole stream's cycles, from where its first layer starts on
  // the layer track (the layers run alone add up to a little more or less than the stream).
  std::string segmentsJson;
  for (size_t k = 0; k < r.segments.size(); ++k) {
    const SegmentSpans& ss = r.segments[k];
    const Segment& seg = m.segments.at(size_t(ss.segment));
    const int pid = 2 + int(k);
    const double start = seg.layers.empty() ? 0.0 : layerStart.at(size_t(seg.layers.front()));
    events += meta("process_name", pid, 0, "\"name\":\"segment " + std::to_string(ss.segment) + ": instructions (whole stream, " +
                                               std::to_string(ss.run.cycles) + " cycles)\"");
    events += meta("process_sort_index", pid, 0, "\"sort_index\":" + std::to_string(pid));
    // A track shows non-overlapping slices only (Perfetto and chrome://tracing nest the slices of
    // one thread), and load has up to three instructions in flight: each unit gets as many lanes
    // as it needs, the first free one taking the next span. Lane 0 of unit u is thread u + 1.
    std::vector<std::vector<uint64_t>> laneEnd(tessera::host::kNumTraceUnits);
    auto thread = [](uint32_t unit, size_t lane) { return int(1 + unit + size_t(tessera::host::kNumTraceUnits) * lane); };
    std::string spans;
    for (const hw::InsnSpan& sp : ss.run.spans) {
      if (sp.insn >= seg.insns.size() || sp.unit >= uint32_t(tessera::host::kNumTraceUnits))
        throw Error(m.source, "segment " + std::to_string(ss.segment) + ": a span of instruction " + std::to_string(sp.insn) +
                                  " on unit " + std::to_string(sp.unit) + ", which the segment or the trace port does not have");
      std::vector<uint64_t>& ends = laneEnd[sp.unit];
      size_t lane = 0;
      while (lane < ends.size() && ends[lane] > sp.begin) ++lane;
      if (lane == ends.size()) ends.push_back(0);
      ends[lane] = sp.end;
      const hw::Insn& in = seg.insns[sp.insn];
      const int li = sp.insn < ss.insnLayer.size() ? ss.insnLayer[sp.insn] : -1;
      const std::string name = hw::mnemonic(in) + (in.opcode == hw::Opcode::kGemm && in.reset ? " (reset)" : "");
      spans += ",{\"name\":\"" + name + "\",\"cat\":\"instruction\",\"ph\":\"X\",\"pid\":" + std::to_string(pid) +
               ",\"tid\":" + std::to_string(thread(sp.unit, lane)) + ",\"ts\":" + micros(start + double(sp.begin) / clockMhz) +
               ",\"dur\":" + micros(double(sp.end - sp.begin) / clockMhz) + ",\"args\":{\"insn\":" + std::to_string(sp.insn) +
               ",\"unit\":\"" + tessera::host::kTraceUnitNames[sp.unit] + "\",\"layer\":\"" +
               (li >= 0 ? escape(m.layers[size_t(li)].name) : std::string()) + "\",\"begin_cycle\":" +
               std::to_string(sp.begin) + ",\"end_cycle\":" + std::to_string(sp.end) + "}}";
    }
    for (uint32_t u = 0; u < uint32_t(tessera::host::kNumTraceUnits); ++u)
      for (size_t lane = 0; lane < std::max<size_t>(laneEnd[u].size(), 1); ++lane) {
        const std::string label = tessera::host::kTraceUnitNames[u] + (lane ? " (" + std::to_string(lane + 1) + ")" : std::string());
        events += meta("thread_name", pid, thread(u, lane), "\"name\":\"" + label + "\"");
        events += meta("thread_sort_index", pid, thread(u, lane), "\"sort_index\":" + std::to_string(16 * u + lane));
      }
    events += spans;
    segmentsJson += std::string(k ? "," : "") + "{\"segment\":" + std::to_string(ss.segment) + ",\"pid\":" + std::to_string(pid) +
                    ",\"cycles\":" + std::to_string(ss.run.cycles) + ",\"instructions\":" + std::to_string(ss.run.insnCount) +
                    ",\"start_us\":" + micros(start) + "}";
  }
  const char* note = "";
  switch (r.spans) {
    case ModelRunResult::Spans::kRecorded: note = "one process per segment run, a track per unit"; break;
    case ModelRunResult::Spans::kUnsupported:
      note = "none: the target reports no per-instruction spans (it is untimed, like fsim)";
      break;
    case ModelRunResult::Spans::kNotAsked: note = "none: the run did not record per-instruction spans"; break;
  }
  if (m.segments.empty()) note = "none: the model has no accelerator segment";
  const bool recorded = r.spans == ModelRunResult::Spans::kRecorded;
  return "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"clock_mhz\":" + std::to_string(clockMhz) + ",\"source\":\"" +
         escape(m.source) + "\",\"instruction_tracks\":" + (recorded ? "true" : "false") +
         ",\"instruction_tracks_note\":\"" + note + "\",\"segments\":[" + segmentsJson + "]},\"traceEvents\":[" + events + "]}\n";
}

}  // namespace tessera::compiler::model
