// The error a chat template raises (glassbox::TemplateError) is public, in glassbox/error.h, so
// that users of the chat API can catch it; this header stays for the template engine's files.
#pragma once

#include "glassbox/error.h"
