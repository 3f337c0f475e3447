// The zynq target plugin: registers `zynq`, which drives the RTL or the HLS bitstream on a Zynq board (option bitstream=), a device the listings leave out.
#include "board.h"
#include "tessera/runtime/target_plugin.h"
#include "tessera/runtime/zynq.h"

TESSERA_TARGET_PLUGIN(registrar) {
  namespace zynq = tessera::runtime::zynq;
  using tessera::runtime::Target;
  using tessera::runtime::TargetOptions;
  tessera::runtime::TargetInfo info;
  info.name = zynq::kName;
  info.description = "the RTL accelerator on a Zynq board: registers through UIO or /dev/mem, DRAM staged in a "
                     "u-dma-buf buffer (docs/deploy.md)";
  info.create = [](const tessera::hw::Config& cfg, tessera::hw::Dram& dram,
                   const TargetOptions& options) -> std::unique_ptr<Target> {
    const zynq::BoardSettings settings = zynq::settingsOf(options);
    if (settings.bitstream == zynq::BoardSettings::Bitstream::kHls)
      return zynq::makeHlsBitstreamTarget(cfg, dram, settings);
    return zynq::makeRtlBitstreamTarget(cfg, dram, settings);
  };
  info.options = {
      {zynq::kUioKey, "/dev/uioN, or the name of a UIO device in /sys/class/uio/*/name (default: tessera)"},
      {zynq::kDevMemKey, "0xADDRESS: map the register window from /dev/mem at this physical address instead of UIO"},
      {zynq::kRegsFileKey, "FILE standing in for the register window: a fake device (tessera-fake-zynq)"},
      {zynq::kBufferKey, "the u-dma-buf device (default /dev/udmabuf0), or a fake device's buffer file"},
      {zynq::kBufferSysfsKey, "DIR of the buffer's phys_addr, size and sync_* attributes (default "
                              "/sys/class/u-dma-buf/NAME, else /sys/class/udmabuf/NAME)"},
      {zynq::kTimeoutKey, "seconds a run may take before it is reported as hung, with every module's status (default 10)"},
      {zynq::kConfigKey, "the config the bitstream was built for (name or JSON file); sessions of another config are refused"},
      {zynq::kBitstreamKey, "rtl (default): the RTL bitstream's registers; hls: the HLS bitstream's four stage IPs "
                            "(fetch, load, compute, store, each a Vitis ap_ctrl_hs block)"}};
  info.optionsProblem = [](const tessera::hw::Config& cfg, const TargetOptions& options) {
    const auto it = options.find(zynq::kConfigKey);
    return it == options.end() ? std::string() : zynq::configMismatch(cfg, it->second);
  };
  registrar.add(std::move(info));
}
