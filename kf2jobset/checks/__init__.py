"""What `convert --check` lists of a converted file edited since: resized, reshaped, renamed, and the records
(`kf2jobset.dev/sized-for`, `named-for`, the size and name literals) the emitter writes for them. Pure."""
