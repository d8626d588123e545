/* render.c */
#include "config.h"
#include "kerndiff/render.h"
