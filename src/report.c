/* report.c */
#include "config.h"
#include "kerndiff/report.h"
