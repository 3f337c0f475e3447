// Channel mixes as channel maps: ShuffleNet's channel split, Concat and channel shuffle become the convolutions' own weight order, over one growing buffer.
#include "passes.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <optional>
#include <set>

namespace tessera::compiler::graph::detail {

using ir::Attribute;
using ir::DType;
using ir::Graph;
using ir::Node;
using ir::Tensor;

namespace {

// Channel `channel` of source `source` (an index into the sources list).
struct Src {
  int source = 0;
  int64_t channel = 0;
};
using Map = std::vector<Src>;

bool isChannelAxis(int64_t axis) { return axis == 1 || axis == -3; }

// A 4-D float activation with a static shape.
bool activation4d(const Graph& g, const std::string& t) {
  if (t.empty() || !g.hasTensor(t)) return false;
  const Tensor& x = g.tensor(t);
  return !x.isConstant && x.dtype == DType::kFloat32 && x.hasShape && x.shape.size() == 4;
}

std::optional<std::vector<int64_t>> constInts(const Graph& g, const Node& n, size_t i) {
  if (i >= n.inputs.size() || !isConst(g, n.inputs[i])) return std::nullopt;
  const Tensor& t = g.tensor(n.inputs[i]);
  if (t.dtype != DType::kInt64 && t.dtype != DType::kInt32) return std::nullopt;
  return t.ints;
}

// The only consumer of `t`, or -1.
int soleConsumer(const Graph& g, const std::string& t) {
  const std::vector<int> c = g.consumers(t);
  return c.size() == 1 ? c[0] : -1;
}

bool isPlainConv(const Graph& g, const Node& n) {
  return n.domain.empty() && n.opType == "Conv" && n.inputs.size() >= 2 && isConst(g, n.inputs[1]) &&
         g.tensor(n.inputs[1]).shape.size() == 4 && g.tensor(n.inputs[1]).dtype == DType::kFloat32 &&
         (n.inputs.size() < 3 || n.inputs[2].empty() || isConst(g, n.inputs[2]));
}

// The channel mixes and what they compute, found in one walk over the nodes in order.
struct Mixes {
  std::map<std::string, Map> maps;  // each mix output's channels, as channels of sources
  std::vector<std::string> sources;
  std::map<std::string, int> sourceIndex;
  std::set<size_t> nodes;                 // the mix nodes (Concat, Slice, Split, the shuffle's three)
  std::set<size_t> rearranging;           // those that are not a plain Concat
  std::map<size_t, std::string> outputOf;  // each mix node's (or its shuffle's) mapped output

  // A mix's input: a mix output's map, or a plain activation as its own source.
  std::optional<Map> input(const Graph& g, const std::string& t) {
    if (maps.count(t)) return maps.at(t);
    if (!activation4d(g, t)) return std::nullopt;
    auto it = sourceIndex.find(t);
    if (it == sourceIndex.end()) {
      it = sourceIndex.emplace(t, int(sources.size())).first;
      sources.push_back(t);
    }
    Map m(size_t(g.tensor(t).shape[1]));
    for (size_t c = 0; c < m.size(); ++c) m[c] = {it->second, int64_t(c)};
    return m;
  }
};

Mixes findMixes(const Graph& g) {
  Mixes x;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (!n.domain.empty() || n.inputs.empty() || n.outputs.empty()) continue;
    if (n.opType == "Concat" && isChannelAxis(n.attrInt("axis", 0)) && n.outputs.size() == 1) {
      Map out;
      bool ok = activation4d(g, n.outputs[0]);
      for (const std::string& t : n.inputs) {
        const std::optional<Map> m = ok ? x.input(g, t) : std::nullopt;
        if (!m) ok = false;
        else out.insert(out.end(), m->begin(), m->end());
      }
      if (!ok || out.empty() || int64_t(out.size()) != g.tensor(n.outputs[0]).shape[1]) continue;
      x.maps[n.outputs[0]] = out;
      x.nodes.insert(i);
      x.outputOf[i] = n.outputs[0];
    } else if (n.opType == "Slice" && n.outputs.size() == 1 && activation4d(g, n.outputs[0])) {
      const auto starts = constInts(g, n, 1), ends = constInts(g, n, 2), axes = constInts(g, n, 3);
      const auto steps = n.inputs.size() > 4 && !n.inputs[4].empty() ? constInts(g, n, 4) : std::vector<int64_t>{1};
      if (!starts || !ends || !axes || !steps || starts->size() != 1 || ends->size() != 1 || axes->size() != 1 ||
          steps->size() != 1 || !isChannelAxis((*axes)[0]) || (*steps)[0] != 1)
        continue;
      const std::optional<Map> in = x.input(g, n.inputs[0]);
      if (!in) continue;
      const int64_t c = int64_t(in->size());
      auto clampIndex = [c](int64_t v) { return std::clamp(v < 0 ? v + c : v, int64_t(0), c); };
      const int64_t b = clampIndex((*starts)[0]), e = std::max(b, clampIndex((*ends)[0]));
      if (e == b || e - b != g.tensor(n.outputs[0]).shape[1]) continue;
      x.maps[n.outputs[0]] = Map(in->begin() + b, in->begin() + e);
      x.nodes.insert(i);
      x.rearranging.insert(i);
      x.outputOf[i] = n.outputs[0];
    } else if (n.opType == "Split" && isChannelAxis(n.attrInt("axis", 0))) {
      const std::optional<Map> in = x.input(g, n.inputs[0]);
      if (!in) continue;
      std::vector<int64_t> sizes;
      bool ok = true;
      for (const std::string& o : n.outputs) {
        ok = ok && activation4d(g, o) && g.tensor(o).shape[1] > 0;
        if (ok) sizes.push_back(g.tensor(o).shape[1]);
      }
      if (!ok || std::accumulate(sizes.begin(), sizes.end(), int64_t(0)) != int64_t(in->size())) continue;
      int64_t at = 0;
      for (size_t k = 0; k < n.outputs.size(); ++k) {
        x.maps[n.outputs[k]] = Map(in->begin() + at, in->begin() + at + sizes[k]);
        at += sizes[k];
      }
      x.nodes.insert(i);
      x.rearranging.insert(i);
      x.outputOf[i] = n.outputs[0];
    } else if (n.opType == "Reshape" && n.outputs.size() == 1) {
      // A channel shuffle: [N, C, H, W] -> [N, G, C/G, H, W], Transpose (0, 2, 1, 3, 4), back to
      // [N, C, H, W]: output channel i * G + j is input channel j * (C / G) + i.
      const Tensor& y = g.tensor(n.outputs[0]);
      if (!activation4d(g, n.inputs[0]) || !y.hasShape || y.shape.size() != 5) continue;
      const int t = soleConsumer(g, n.outputs[0]);
      if (t < 0) continue;
      const Node& tr = g.nodes[size_t(t)];
      if (tr.opType != "Transpose" || !tr.domain.empty() || tr.attrInts("perm", {}) != std::vector<int64_t>{0, 2, 1, 3, 4})
        continue;
      const int r = soleConsumer(g, tr.outputs.at(0));
      if (r < 0) continue;
      const Node& back = g.nodes[size_t(r)];
      const std::vector<int64_t>& xs = g.tensor(n.inputs[0]).shape;
      if (back.opType != "Reshape" || !back.domain.empty() || back.outputs.size() != 1 ||
          !activation4d(g, back.outputs[0]) || g.tensor(back.outputs[0]).shape != xs)
        continue;
      const int64_t groups = y.shape[1], per = y.shape[2];
      if (y.shape[0] != xs[0] || groups * per != xs[1] || y.shape[3] != xs[2] || y.shape[4] != xs[3]) continue;
      const std::optional<Map> in = x.input(g, n.inputs[0]);
      if (!in) continue;
      Map out(in->size());
      for (int64_t i = 0; i < per; ++i)
        for (int64_t j = 0; j < groups; ++j) out[size_t(i * groups + j)] = (*in)[size_t(j * per + i)];
      x.maps[back.outputs[0]] = out;
      for (size_t k : {i, size_t(t), size_t(r)}) {
        x.nodes.insert(k);
        x.rearranging.insert(k);
        x.outputOf[k] = back.outputs[0];
      }
    }
  }
  return x;
}

// Sources joined by the mixes they share (union-find by source index).
struct Regions {
  std::vector<int> parent;
  explicit Regions(size_t n) : parent(n) { std::iota(parent.begin(), parent.end(), 0); }
  int find(int a) { return parent[size_t(a)] == a ? a : parent[size_t(a)] = find(parent[size_t(a)]); }
  void join(int a, int b) { parent[size_t(find(a))] = find(b); }
};

// A reader of a mix output that the rewrite can take: a convolution over all its channels, or a
// depthwise one whose outputs only such convolutions read.
enum class Reader { kNone, kConv, kDepthwise };

Reader readerKind(const Graph& g, const Node& n, const std::string& t) {
  if (!isPlainConv(g, n) || n.inputs[0] != t || n.outputs.size() != 1) return Reader::kNone;
  const Tensor& w = g.tensor(n.inputs[1]);
  const int64_t c = g.tensor(t).shape[1], groups = n.attrInt("group", 1);
  if (groups == 1 && w.shape[1] == c) return Reader::kConv;
  if (groups != c || w.shape[0] != c || w.shape[1] != 1 || !activation4d(g, n.outputs[0])) return Reader::kNone;
  for (int k : g.consumers(n.outputs[0]))
    if (readerKind(g, g.nodes[size_t(k)], n.outputs[0]) != Reader::kConv) return Reader::kNone;
  return g.consumers(n.outputs[0]).empty() ? Reader::kNone : Reader::kDepthwise;
}

// The Conv (perhaps behind a Relu that alone reads it) whose output is `t`, or -1.
int producingConv(const Graph& g, const std::string& t) {
  int p = g.producer(t);
  if (p < 0) return -1;
  if (g.nodes[size_t(p)].opType == "Relu" && g.nodes[size_t(p)].domain.empty()) {
    if (soleConsumer(g, g.nodes[size_t(p)].inputs.at(0)) != p) return -1;
    p = g.producer(g.nodes[size_t(p)].inputs[0]);
    if (p < 0) return -1;
  }
  return isPlainConv(g, g.nodes[size_t(p)]) && g.nodes[size_t(p)].attrInt("group", 1) == 1 ? p : -1;
}

}  // namespace

void channelMixesAsMaps(const hw::Config& cfg, Graph& g) {
  const int64_t block = int64_t(cfg.blockOut);
  Mixes mixes = findMixes(g);
  if (mixes.rearranging.empty()) return;
  Regions regions(mixes.sources.size());
  for (const auto& [t, m] : mixes.maps)
    for (const Src& s : m) regions.join(s.source, m.front().source);
  // Per region: does it rearrange (a plain channel Concat is left to the copy-free concat), and can
  // the rewrite take every reader of its mix outputs and every source?
  auto regionOf = [&](size_t node) { return regions.find(mixes.maps.at(mixes.outputOf.at(node)).front().source); };
  std::map<int, bool> rearranges, ok;
  for (size_t i : mixes.rearranging) rearranges[regionOf(i)] = true;
  for (const auto& [t, m] : mixes.maps) {
    const int r = regions.find(m.front().source);
    ok.emplace(r, true);
    if (std::find(g.outputs.begin(), g.outputs.end(), t) != g.outputs.end()) ok[r] = false;
    std::set<std::pair<int, int64_t>> distinct;
    for (const Src& c : m) distinct.insert({c.source, c.channel});
    for (int k : g.consumers(t)) {
      if (mixes.nodes.count(size_t(k))) continue;
      const Reader kind = readerKind(g, g.nodes[size_t(k)], t);
      // A depthwise reader runs once per place in the buffer: a channel mixed in twice has one.
      if (kind == Reader::kNone || (kind == Reader::kDepthwise && distinct.size() != m.size())) ok[r] = false;
    }
  }
  // Sources: read by the mixes alone, whole blocks of channels or a convolution's output to pad.
  // (A region's sources share batch and spatial size: its Concats and Slices keep them.)
  for (size_t s = 0; s < mixes.sources.size(); ++s) {
    const std::string& t = mixes.sources[s];
    const int r = regions.find(int(s));
    for (int k : g.consumers(t))
      if (!mixes.nodes.count(size_t(k))) ok[r] = false;
    if (g.tensor(t).shape[1] % block && producingConv(g, t) < 0) ok[r] = false;
  }
  std::set<int> chosen;
  for (const auto& [r, yes] : rearranges)
    if (yes && ok[r]) chosen.insert(r);
  if (chosen.empty()) return;

  // Sources whose channels are not whole blocks get zero output channels from their convolution.
  std::map<std::string, int64_t> padded;  // source -> channels it takes in the buffer
  for (size_t s = 0; s < mixes.sources.size(); ++s) {
    if (!chosen.count(regions.find(int(s)))) continue;
    const std::string& t = mixes.sources[s];
    const int64_t c = g.tensor(t).shape[1], cp = (c + block - 1) / block * block;
    padded[t] = cp;
    if (cp == c) continue;
    Node& conv = g.nodes[size_t(producingConv(g, t))];
    const Tensor& w = g.tensor(conv.inputs[1]);
    const int64_t per = w.elements() / c;
    Tensor nw = w;
    nw.name = uniqueName(g, conv.inputs[1] + "_padded");
    nw.shape[0] = cp;
    nw.floats.resize(size_t(cp * per), 0.0f);
    Tensor nb = constTensor(uniqueName(g, conv.name + "_padded_bias"), DType::kFloat32, {cp});
    nb.floats.assign(size_t(cp), 0.0f);
    if (conv.inputs.size() > 2 && !conv.inputs[2].empty()) {
      const std::vector<float>& b = g.tensor(conv.inputs[2]).floats;
      std::copy(b.begin(), b.end(), nb.floats.begin());
    }
    g.tensors[nw.name] = nw;
    g.tensors[nb.name] = nb;
    conv.inputs.resize(3);
    conv.inputs[1] = nw.name;
    conv.inputs[2] = nb.name;
    g.tensors[conv.outputs[0]].shape[1] = cp;
    g.tensors[t].shape[1] = cp;
  }

  // Each reader takes the Concat of its region's sources up to the last one its channels come
  // from, in the order they are produced: the Concats of a region are prefixes of one another
  // (one buffer, docs/graph.md), and a channel's place in it is its source's offset plus its own.
  std::map<int, std::vector<int>> order;  // region -> its sources, by producer
  for (size_t s = 0; s < mixes.sources.size(); ++s)
    if (chosen.count(regions.find(int(s)))) order[regions.find(int(s))].push_back(int(s));
  std::map<int, int64_t> offsetOf;  // source -> its first channel in the region's buffer
  for (auto& [r, list] : order) {
    std::sort(list.begin(), list.end(),
              [&](int a, int b) { return g.producer(mixes.sources[size_t(a)]) < g.producer(mixes.sources[size_t(b)]); });
    int64_t at = 0;
    for (int s : list) {
      offsetOf[s] = at;
      at += padded.at(mixes.sources[size_t(s)]);
    }
  }
  std::map<std::pair<int, size_t>, std::string> buffers;  // (region, sources used) -> the Concat's output
  std::map<std::string, std::pair<size_t, Node>> inserts;  // each Concat, to go before its first reader
  auto bufferFor = [&](const Map& m, size_t reader) {
    const int r = regions.find(m.front().source);
    const std::vector<int>& list = order.at(r);
    size_t used = 0;
    for (const Src& s : m)
      used = std::max(used, size_t(std::find(list.begin(), list.end(), s.source) - list.begin()) + 1);
    auto it = buffers.find({r, used});
    if (it != buffers.end()) {
      size_t& before = inserts.at(it->second).first;
      before = std::min(before, reader);
      return it->second;
    }
    Node c;
    c.opType = "Concat";
    c.name = g.nodes[reader].name + "_channels";
    c.attrs["axis"] = intAttribute(1);
    int64_t channels = 0;
    for (size_t k = 0; k < used; ++k) {
      c.inputs.push_back(mixes.sources[size_t(list[k])]);
      channels += padded.at(c.inputs.back());
    }
    Tensor y = g.tensor(c.inputs[0]);
    y.name = uniqueName(g, c.name);
    y.shape[1] = channels;
    y.floats.clear();
    g.tensors[y.name] = y;
    c.outputs = {y.name};
    inserts.emplace(y.name, std::make_pair(reader, c));
    buffers[{r, used}] = y.name;
    return y.name;
  };
  // A convolution over all channels reads the buffer with its weights at the channels' places.
  auto scatter = [&](Node& conv, const std::string& input, const std::vector<int64_t>& place, int64_t channels) {
    const Tensor& w = g.tensor(conv.inputs[1]);
    const int64_t o = w.shape[0], c = w.shape[1], taps = w.shape[2] * w.shape[3];
    Tensor nw = w;
    nw.name = uniqueName(g, conv.inputs[1] + "_mapped");
    nw.shape[1] = channels;
    nw.floats.assign(size_t(o * channels * taps), 0.0f);
    for (int64_t k = 0; k < o; ++k)
      for (int64_t l = 0; l < c; ++l)
        for (int64_t t = 0; t < taps; ++t)
          nw.floats[size_t((k * channels + place[size_t(l)]) * taps + t)] += w.floats[size_t((k * c + l) * taps + t)];
    g.tensors[nw.name] = nw;
    conv.inputs[0] = input;
    conv.inputs[1] = nw.name;
  };
  for (const auto& [t, m] : mixes.maps) {
    if (!chosen.count(regions.find(m.front().source))) continue;
    for (int k : g.consumers(t)) {
      if (mixes.nodes.count(size_t(k))) continue;
      const std::string buffer = bufferFor(m, size_t(k));
      const int64_t channels = g.tensor(buffer).shape[1];
      std::vector<int64_t> place(m.size());
      for (size_t l = 0; l < m.size(); ++l) place[l] = offsetOf.at(m[l].source) + m[l].channel;
      Node& reader = g.nodes[size_t(k)];
      if (readerKind(g, reader, t) == Reader::kConv) {
        scatter(reader, buffer, place, channels);
        continue;
      }
      // Depthwise: over the buffer's channels (zero weights on those it does not read), its output
      // in the buffer's order; its readers take that order in their weights.
      const Tensor& w = g.tensor(reader.inputs[1]);
      const int64_t taps = w.shape[2] * w.shape[3];
      Tensor nw = w;
      nw.name = uniqueName(g, reader.inputs[1] + "_mapped");
      nw.shape[0] = channels;
      nw.floats.assign(size_t(channels * taps), 0.0f);
      Tensor nb = constTensor(uniqueName(g, reader.name + "_mapped_bias"), DType::kFloat32, {channels});
      nb.floats.assign(size_t(channels), 0.0f);
      const bool hasBias = reader.inputs.size() > 2 && !reader.inputs[2].empty();
      for (size_t l = 0; l < m.size(); ++l) {
        for (int64_t tap = 0; tap < taps; ++tap)
          nw.floats[size_t(place[l] * taps + tap)] = w.floats[size_t(int64_t(l) * taps + tap)];
        if (hasBias) nb.floats[size_t(place[l])] = g.tensor(reader.inputs[2]).floats[l];
      }
      g.tensors[nw.name] = nw;
      g.tensors[nb.name] = nb;
      Tensor y = g.tensor(reader.outputs[0]);
      const std::string old = y.name;
      y.name = uniqueName(g, old + "_mapped");
      y.shape[1] = channels;
      g.tensors[y.name] = y;
      reader.inputs.resize(3);
      reader.inputs[0] = buffer;
      reader.inputs[1] = nw.name;
      reader.inputs[2] = nb.name;
      reader.outputs[0] = y.name;
      reader.attrs["group"] = intAttribute(channels);
      for (int next : g.consumers(old)) scatter(g.nodes[size_t(next)], y.name, place, channels);
    }
  }
  // The mixes are read by nothing now; the Concats go in before their first readers.
  std::multimap<size_t, Node> before;
  for (auto& [name, at] : inserts) before.emplace(at.first, std::move(at.second));
  std::vector<Node> nodes;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    for (auto [it, end] = before.equal_range(i); it != end; ++it) nodes.push_back(std::move(it->second));
    if (mixes.nodes.count(i) && chosen.count(regionOf(i))) continue;
    nodes.push_back(std::move(g.nodes[i]));
  }
  g.nodes = std::move(nodes);
  g.pruneTensors();
}

}  // namespace tessera::compiler::graph::detail
