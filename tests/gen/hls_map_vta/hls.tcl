# Fixture for tessera-hls-map-gen: 32-bit m_axi addresses, as VTA builds for the Pynq.
config_interface -m_axi_addr64=false
