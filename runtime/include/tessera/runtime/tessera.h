/* Tessera's C extensions to the VTA API: target and config selection, errors, counters. */
#ifndef TESSERA_RUNTIME_TESSERA_H_
#define TESSERA_RUNTIME_TESSERA_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*!
 * (Re)initializes the runtime: target name (e.g. "fsim"; NULL: $TESSERA_TARGET or "fsim") and
 * hardware config (a shipped config name or a JSON path; NULL: $TESSERA_CONFIG or "default").
 * Frees every buffer, queue and device of the previous initialization. Returns 0 on success.
 */
int TesseraInit(const char* target, const char* config);
/*! Name of the selected target, and of the selected config. */
const char* TesseraTargetName(void);
const char* TesseraConfigName(void);
/*! Comma-separated list of the targets built into this library. */
const char* TesseraAvailableTargets(void);
/*!
 * The calling thread's last error ("where: what"), or NULL if none since TesseraClearError().
 * After an error, the thread's command queue refuses work until the error is cleared; clearing
 * also discards whatever the thread had queued since its last VTASynchronize.
 */
const char* TesseraLastError(void);
void TesseraClearError(void);
/*! Counters of the calling thread's command-queue device as a JSON object; returns the length. */
size_t TesseraCounters(char* json, size_t capacity);

#ifdef __cplusplus
}
#endif
#endif /* TESSERA_RUNTIME_TESSERA_H_ */
