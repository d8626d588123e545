/* discover.c */
#include "kerndiff/discover.h"
