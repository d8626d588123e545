/* value.c */
#include "kerndiff/value.h"
