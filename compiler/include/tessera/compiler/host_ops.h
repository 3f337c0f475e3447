// The host executor: ONNX operators with their reference semantics, shape inference, whole-graph evaluation.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "tessera/compiler/graph.h"

namespace tessera::compiler {

// Fills the dtype and shape of every tensor the nodes compute. Throws tessera::Error naming the
// node, its op type and the opset for an unsupported operator or inconsistent shapes.
void inferShapes(graph::Graph& g);

// Whether the host executor runs `n` (ONNX default domain, opsets 11..17).
bool hostSupports(const graph::Node& n, int64_t opset);

// Runs one node: inputs in the node's input order (nullptr for omitted optional inputs); returns
// its outputs with data (floats for float32, ints otherwise). Integer operators are exact;
// QuantizeLinear rounds half to even and saturates, as ONNX specifies.
std::vector<graph::Tensor> runHostNode(const graph::Node& n, const std::vector<const graph::Tensor*>& inputs,
                                       int64_t opset);

// The whole graph on the host from the given inputs; returns every tensor it computed.
std::map<std::string, graph::Tensor> evaluate(const graph::Graph& g, const std::map<std::string, graph::Tensor>& inputs);

}  // namespace tessera::compiler
