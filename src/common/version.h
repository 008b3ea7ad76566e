/* The version of sandlens: the agent (sandlensd --version, /healthz
 * "version") and the CLI (sandlens --version) are built from one tree and
 * carry the same one. The Makefile reads it from here (VERSION, the .deb). */
#ifndef SANDLENS_COMMON_VERSION_H
#define SANDLENS_COMMON_VERSION_H

#define SANDLENS_VERSION "0.1.0"

#endif
