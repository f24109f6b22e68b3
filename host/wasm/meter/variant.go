package meter

// Variant is an experiment switch (temporary).
var Variant = 0
