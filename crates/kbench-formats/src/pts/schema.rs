//! The elements of a PTS result file, in the order result-file.xsd's
//! sequences give them, each with whether it is required; and the names
//! kbench keeps them under in an imported record.

/// An element of a sequence: (name, required).
pub type Element = (&'static str, bool);

pub const ROOT: &str = "PhoronixTestSuite";

pub const GENERATED: &[Element] = &[
    ("Title", true),
    ("LastModified", true),
    ("TestClient", true),
    ("Description", true),
    ("Notes", false),
    ("InternalTags", false),
    ("ReferenceID", false),
    ("PreSetEnvironmentVariables", false),
];

pub const SYSTEM: &[Element] = &[
    ("Identifier", true),
    ("Hardware", true),
    ("Software", true),
    ("User", true),
    ("TimeStamp", true),
    ("TestClientVersion", true),
    ("Notes", true),
    ("JSON", false),
    ("CostValueForComparison", false),
];

pub const RESULT: &[Element] = &[
    ("Identifier", true),
    ("Title", true),
    ("AppVersion", true),
    ("Arguments", true),
    ("Description", true),
    ("Scale", true),
    ("Proportion", true),
    ("DisplayFormat", true),
    ("Annotation", false),
    ("Parent", false),
    ("Data", true),
];

pub const ENTRY: &[Element] = &[
    ("Identifier", true),
    ("Value", true),
    ("RawString", false),
    ("JSON", false),
];

/// The prefix of `<Generated>`'s elements among a run's imported fields
/// (`Generated/Title`); `<System>`'s are kept by their own names.
pub const GENERATED_PREFIX: &str = "Generated/";

/// The prefix of `<Entry>`'s elements among a test's imported fields
/// (`Entry/JSON`); `<Result>`'s are kept by their own names.
pub const ENTRY_PREFIX: &str = "Entry/";

/// The only display format kbench reads: one number per identifier.
pub const BAR_GRAPH: &str = "BAR_GRAPH";
