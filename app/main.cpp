#include "app/cli.h"

int main(int argc, char **argv)
{
    return fusescope::runFusescope(argc, argv);
}
