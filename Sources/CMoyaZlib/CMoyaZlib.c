// Empty: the module's functions are inline, in include/CMoyaZlib.h.
#include "CMoyaZlib.h"
