/* The runner library: jobs, limits, isolation, the danger gate, backends. */
#pragma once
