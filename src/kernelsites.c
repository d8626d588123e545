/* kernelsites.c */
#include "config.h"
#include "kerndiff/kernelsites.h"
