/* Task routes of the local API (docs/API.md "Tasks", docs/TASKS.md):
 *
 *   GET    /api/v1/capabilities
 *   GET    /api/v1/tasks
 *   POST   /api/v1/tasks                     (JSON body; follow=true streams)
 *   GET    /api/v1/tasks/{id}
 *   DELETE /api/v1/tasks/{id}
 *   GET    /api/v1/tasks/{id}/result?format=pprof|folded|svg|json|html
 *
 * Query parameters: result takes format (at most once); every other route,
 * POST included, takes none. Anything else, and a NUL byte (%00) in a
 * parameter, is a 400 INVALID_ARGUMENT naming it (sl_api_collect_params,
 * sl_api_params_only), checked after the method and before any work.
 *
 * Served from the router in api.c (which hands these URLs over whole),
 * on MHD threads. A follow stream is a chunked response whose content
 * reader suspends the connection while there is nothing new and is resumed
 * by the executor's notifier; when the response is freed before its final
 * line was produced (the client went away), the task is cancelled.
 */
#ifndef SANDLENS_API_TASKS_H
#define SANDLENS_API_TASKS_H

#include <stddef.h>
#include <microhttpd.h>

struct sl_agent;

/* Largest POST body accepted (bytes). */
#define SL_API_TASK_BODY_MAX (64u << 10)
/* Largest task result served (bytes); results are never cut. */
#define SL_API_TASK_RESULT_MAX ((size_t)64 << 20)

/* 1 when url is one of the task routes above (with or without suffix). */
int sl_api_tasks_match(const char *url);

/* cb(method, path) for each task route sl_api_tasks_request answers
 * ("{id}" stands for a task id); see sl_api_routes (api.h). */
void sl_api_tasks_routes(void (*cb)(const char *method, const char *path, void *ctx), void *ctx);

/* The MHD access handler for a task route (same contract as
 * MHD_AccessHandlerCallback; *con_cls holds the POST body being read). */
enum MHD_Result sl_api_tasks_request(struct sl_agent *a, struct MHD_Connection *c, const char *url,
				     const char *method, const char *upload, size_t *upload_size,
				     void **con_cls);

/* MHD_OPTION_NOTIFY_COMPLETED callback: frees what *con_cls holds. */
void sl_api_tasks_completed(void *cls, struct MHD_Connection *c, void **con_cls,
			    enum MHD_RequestTerminationCode toe);

/* Register the follow-stream notifier with a->tasks (API start). */
void sl_api_tasks_attach(struct sl_agent *a);

/* API stop: unregister the notifier, end every follow stream and resume
 * every suspended connection (MHD must not be stopped with suspended
 * connections). Their tasks are cancelled when MHD frees the responses. */
void sl_api_tasks_release_all(struct sl_agent *a);

/* Follow streams not yet freed (being written or waiting for records). */
size_t sl_api_tasks_streams_open(void);

/* Pure helpers (unit-tested). */

/* Split "/api/v1/tasks/<id>[/result]": 0 and id (NUL-terminated,
 * idlen bytes) with *result set, or -1 when it is not such a URL or the id
 * is empty, too long or has characters outside [A-Za-z0-9-]. */
int sl_api_tasks_split(const char *url, char *id, size_t idlen, int *result);

#endif
