// $d: filled in by its owner; delete this file once the module has real sources.
