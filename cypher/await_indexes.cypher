// Wait until every index (including the ones behind constraints) is ONLINE.
// $timeout_s: int, seconds before the procedure gives up.
CALL db.awaitIndexes($timeout_s)
