#include "app/cli.h"

#include "core/runtime/blascore.h"

int main(int argc, char **argv)
{
    fusescope::configureBlas(argv);
    return fusescope::runFusescope(argc, argv);
}
