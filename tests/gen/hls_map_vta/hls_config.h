// Fixture for tessera-hls-map-gen: no macro is needed by the VTA-shaped types.
#define VTA_FIXTURE_UNUSED 0
