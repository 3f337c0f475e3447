/* VTA driver C ABI: the same names and meaning as Apache TVM VTA's driver.h, over Tessera targets. */
#ifndef VTA_DRIVER_H_
#define VTA_DRIVER_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*! Memory is cached by the CPU (VTAMemAlloc's `cached` argument). */
#define VTA_CACHED 1
#define VTA_NOT_CACHED 0

/*! Opaque handle to one device of the selected target. */
typedef void* VTADeviceHandle;
/*! Physical address as seen by the accelerator (32 bits, as on VTA's boards). */
typedef uint32_t vta_phy_addr_t;

/*! Creates a device of the selected target (TESSERA_TARGET or TesseraInit); NULL on error. */
VTADeviceHandle VTADeviceAlloc(void);
/*! Releases a device. */
void VTADeviceFree(VTADeviceHandle handle);
/*!
 * Runs insn_count instructions found at physical address insn_phy_addr and waits for FINISH.
 * Returns 0 on success; non-zero if the program faulted or the wait limit was exceeded, with the
 * reason in TesseraLastError().
 */
int VTADeviceRun(VTADeviceHandle device, vta_phy_addr_t insn_phy_addr, uint32_t insn_count,
                 uint32_t wait_cycles);

/*! Allocates physically contiguous accelerator memory; returns its CPU address or NULL. */
void* VTAMemAlloc(size_t size, int cached);
/*! Frees memory from VTAMemAlloc. */
void VTAMemFree(void* buf);
/*! Physical address of a CPU address inside accelerator memory (0 if it is not). */
vta_phy_addr_t VTAMemGetPhyAddr(void* buf);
/*! Copies between host memory and accelerator memory. */
void VTAMemCopyFromHost(void* dst, const void* src, size_t size);
void VTAMemCopyToHost(void* dst, const void* src, size_t size);
/*! Cache maintenance for non-coherent boards; no-ops on simulated targets. */
void VTAFlushCache(void* vir_addr, vta_phy_addr_t phy_addr, int size);
void VTAInvalidateCache(void* vir_addr, vta_phy_addr_t phy_addr, int size);
/*! Loads a bitstream on boards; simulated targets accept and ignore it. */
void VTAProgram(const char* bitstream);

#ifdef __cplusplus
}
#endif
#endif /* VTA_DRIVER_H_ */
