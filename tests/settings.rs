//! Settings live with their method (issue 24 item 2): every `[integrator]`
//! key given to a method that has no use for it is an error naming the
//! method and the key, from the model file (with its line), from the
//! command line and through `--set`; a method chosen over the file's drops
//! the file's keys of the old method.

mod common;

use common::oscillator;
use flexmb::input::{load_model_str, load_model_with_sets};
use flexmb::integrate::IntegratorSpec;

/// Every key of the table with a value of the right type (TOML).
const KEYS: [(&str, &str); 34] = [
    ("step_control", "\"fixed\""),
    ("stabilization", "\"none\""),
    ("baumgarte", "[1.0, 2.0]"),
    ("rtol", "1e-6"),
    ("atol", "1e-7"),
    ("datol", "0.0"),
    ("projection", "\"mass\""),
    ("pstab_passes", "\"two\""),
    ("max_step", "0.1"),
    ("max_steps", "1000"),
    ("tableau", "\"rk4\""),
    ("scheme", "\"midpoint\""),
    ("family", "\"u0\""),
    ("rho1", "0.5"),
    ("rho2", "0.5"),
    ("rho3", "0.5"),
    ("option", "2"),
    ("form", "\"a\""),
    ("dt", "0.01"),
    ("t_end", "0.05"),
    ("tol", "1e-8"),
    ("max_iter", "20"),
    ("jacobian", "\"consistent\""),
    ("convergence", "\"scaled\""),
    ("refactor", "\"iteration\""),
    ("line_search", "\"none\""),
    ("sparse", "false"),
    ("factorization", "\"auto\""),
    ("initialize", "\"check\""),
    ("newton", "\"full\""),
    ("max_order", "5"),
    ("error_test", "\"qv\""),
    ("alpha", "0.5"),
    ("kappa", "1.0"),
];

/// The keys each method takes with its default steps, as documented in
/// docs/model-format.md (written out here, not taken from the library).
fn takes(method: &str) -> &'static [&'static str] {
    const RUN: [&str; 4] = ["t_end", "sparse", "factorization", "initialize"];
    match method {
        "gssss" => &[
            "t_end",
            "sparse",
            "factorization",
            "initialize",
            "dt",
            "step_control",
            "scheme",
            "family",
            "rho1",
            "rho2",
            "rho3",
            "option",
            "form",
            "tol",
            "rtol",
            "atol",
            "max_iter",
            "jacobian",
            "convergence",
            "refactor",
            "line_search",
        ],
        "tcg" => &[
            "t_end",
            "sparse",
            "factorization",
            "initialize",
            "dt",
            "step_control",
            "tol",
            "rtol",
            "atol",
            "max_iter",
            "jacobian",
            "convergence",
            "refactor",
            "line_search",
        ],
        "tdg" => &[
            "t_end",
            "sparse",
            "factorization",
            "initialize",
            "dt",
            "alpha",
            "rtol",
            "atol",
            "max_iter",
            "refactor",
            "line_search",
        ],
        "alpha-kappa" => &[
            "t_end",
            "sparse",
            "factorization",
            "initialize",
            "dt",
            "alpha",
            "kappa",
            "rtol",
            "atol",
            "max_iter",
            "refactor",
            "line_search",
        ],
        "dopri5" => &[
            "t_end",
            "sparse",
            "factorization",
            "initialize",
            "step_control",
            "stabilization",
            "baumgarte",
            "datol",
            "projection",
            "pstab_passes",
            "rtol",
            "atol",
            "max_step",
            "max_steps",
        ],
        "rk4" | "heun" => &[
            "t_end",
            "sparse",
            "factorization",
            "initialize",
            "step_control",
            "stabilization",
            "baumgarte",
            "datol",
            "projection",
            "pstab_passes",
            "dt",
        ],
        "epm" => &[
            "t_end",
            "sparse",
            "factorization",
            "initialize",
            "step_control",
            "tableau",
            "dt",
        ],
        "bdf" => &[
            "t_end",
            "sparse",
            "factorization",
            "initialize",
            "newton",
            "max_order",
            "error_test",
            "rtol",
            "atol",
            "max_step",
            "max_steps",
        ],
        _ => &RUN,
    }
}

const METHODS: [&str; 9] = [
    "gssss",
    "tcg",
    "tdg",
    "alpha-kappa",
    "dopri5",
    "rk4",
    "heun",
    "epm",
    "bdf",
];

/// The `[integrator]` body for `method` with what it needs to run
/// (`t_end`, and `dt` for the fixed-step methods) and `extra` lines.
fn table(method: &str, extra: &str) -> String {
    let dt = if takes(method).contains(&"dt") && !extra.starts_with("dt ") {
        "dt = 0.01\n"
    } else {
        ""
    };
    let t_end = if extra.starts_with("t_end ") {
        ""
    } else {
        "t_end = 0.05\n"
    };
    format!("method = \"{method}\"\n{dt}{t_end}{extra}\n")
}

/// From the file: each foreign key is an error naming the method, the key
/// and the key's line; each of the method's own keys resolves.
#[test]
fn foreign_keys_in_the_file() {
    let mut refused = 0;
    for m in METHODS {
        for (key, value) in KEYS {
            let text = oscillator(&table(m, &format!("{key} = {value}")));
            let line = 1 + text
                .lines()
                .position(|l| l.starts_with(&format!("{key} = ")))
                .expect("the key's line");
            let file = load_model_str(&text, "s.toml").expect("loads");
            let got = file.integrator(&IntegratorSpec::default());
            if takes(m).contains(&key) {
                // Taken: resolved, or refused for its value (`family`
                // without its roots), never as a foreign key.
                if let Err(e) = got {
                    assert!(!e.to_string().contains("has no setting"), "{m} {key}: {e}");
                }
            } else {
                let e = got
                    .expect_err(&format!("{m} with `{key}` must fail"))
                    .to_string();
                assert!(
                    e.contains(&format!("method \"{m}\" has no setting `{key}`")),
                    "{m} {key}: {e}"
                );
                assert!(
                    e.contains(&format!("s.toml:{line}")),
                    "{m} {key} line {line}: {e}"
                );
                refused += 1;
            }
        }
    }
    // 9 methods x 34 keys, less the keys each takes.
    let taken: usize = METHODS.iter().map(|m| takes(m).len()).sum();
    assert_eq!(refused, 9 * 34 - taken);
}

/// As overrides (the command line's flags are an [`IntegratorSpec`]): a
/// foreign key given with the method is refused; a method given over the
/// file's drops the file's keys of the old method and keeps the shared ones.
#[test]
fn foreign_keys_as_overrides() {
    let file = load_model_str(
        &oscillator(&table("gssss", "scheme = \"newmark\"\ntol = 1e-9")),
        "s.toml",
    )
    .unwrap();
    let over = |m: &str| IntegratorSpec {
        method: Some(m.into()),
        t_end: Some(0.05),
        dt: takes(m).contains(&"dt").then_some(0.01),
        ..IntegratorSpec::default()
    };
    for m in METHODS {
        // The file's GSSSS keys are dropped for another method.
        file.integrator(&over(m))
            .unwrap_or_else(|e| panic!("--method {m} over a GSSSS file: {e}"));
        let alpha = IntegratorSpec {
            alpha: Some(0.5),
            ..over(m)
        };
        let got = file.integrator(&alpha);
        if takes(m).contains(&"alpha") {
            got.unwrap();
        } else {
            let e = got.unwrap_err().to_string();
            assert!(
                e.contains(&format!("method \"{m}\" has no setting `alpha`"))
                    && e.contains("\"tdg\", \"alpha-kappa\""),
                "{m}: {e}"
            );
        }
    }
    // A key the new method shares is kept: rtol of the Newton test becomes
    // DOPRI5's tolerance.
    let file = load_model_str(&oscillator(&table("gssss", "rtol = 1e-4")), "s.toml").unwrap();
    let c = file.integrator(&over("dopri5")).unwrap();
    assert!(c.label().contains("rtol 1e-4"), "{}", c.label());
    // The same method given again drops nothing: the file's keys are checked.
    let file = load_model_str(&oscillator(&table("rk4", "")), "s.toml").unwrap();
    let e = file
        .integrator(&IntegratorSpec {
            method: Some("rk4".into()),
            kappa: Some(flexmb::integrate::KappaChoice::Number(1.0)),
            ..IntegratorSpec::default()
        })
        .unwrap_err()
        .to_string();
    assert!(e.contains("method \"rk4\" has no setting `kappa`"), "{e}");
}

/// Through `--set` (and so a sweep's cases): `integrator.method` other than
/// the file's drops the file's keys of the old method; a foreign key set
/// alongside is refused; a typo is still an unknown key.
#[test]
fn foreign_keys_through_set() {
    let text = oscillator(&table("gssss", "scheme = \"newmark\"\noption = 3"));
    let load = |sets: &[&str]| {
        let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
        load_model_with_sets(&text, "s.toml", &sets)
            .and_then(|f| f.integrator(&IntegratorSpec::default()).map(|c| c.label()))
    };
    for m in METHODS {
        load(&[&format!("integrator.method=\"{m}\"")])
            .unwrap_or_else(|e| panic!("--set method={m}: {e}"));
    }
    let e = load(&["integrator.method=\"bdf\"", "integrator.scheme=\"newmark\""])
        .unwrap_err()
        .to_string();
    assert!(e.contains("method \"bdf\" has no setting `scheme`"), "{e}");
    let e = load(&["integrator.scheme=\"midpoint\"", "integrator.alpha=0.5"])
        .unwrap_err()
        .to_string();
    assert!(e.contains("method \"gssss\" has no setting `alpha`"), "{e}");
    let typo = oscillator(&table("gssss", "shceme = \"newmark\""));
    let e = match load_model_with_sets(&typo, "s.toml", &["integrator.method=\"rk4\"".into()]) {
        Ok(_) => panic!("a typo must be refused"),
        Err(e) => e.to_string(),
    };
    assert!(e.contains("shceme"), "{e}");
}

/// The command line: `flexmb run --method M --KEY VALUE` with a foreign key
/// exits with status 2 and names the method and the key.
#[cfg(feature = "cli")]
#[test]
fn foreign_keys_on_the_command_line() {
    let model = common::scratch::write_scratch(
        "settings_cli",
        "osc.toml",
        &oscillator("t_end = 0.05\ndt = 0.01"),
    );
    let out_file = common::scratch::scratch_file("settings_cli", "out.h5");
    let mut refused = 0;
    for m in METHODS {
        for (key, value) in KEYS {
            if takes(m).contains(&key) || key == "t_end" {
                continue;
            }
            let flag = format!("--{}", key.replace('_', "-"));
            let mut args = vec![
                "run".to_string(),
                model.display().to_string(),
                "-q".into(),
                "-o".into(),
                out_file.display().to_string(),
                "--method".into(),
                m.into(),
                flag,
            ];
            if key != "sparse" {
                args.push(value.trim_matches('"').replace(['[', ']', ' '], ""));
            }
            let out = std::process::Command::new(env!("CARGO_BIN_EXE_flexmb"))
                .args(&args)
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
            assert!(
                err.contains(&format!("method \"{m}\" has no setting `{key}`")),
                "{args:?}: {err}"
            );
            refused += 1;
        }
    }
    assert!(refused > 150, "{refused}");
}

/// From code: each method's builder, with its defaults, equals the resolved
/// `[integrator]` table naming only the method (the run's `t_end`, the
/// fixed-step methods' `dt`, the adaptive ones' `max_step`; RK4, Heun and
/// DOPRI5 are built with PStab, a file's default is no stabilization).
#[test]
fn builder_defaults_equal_the_files() {
    use flexmb::integrate::IntegratorConfig;
    let cases: [(&str, IntegratorConfig, &str); 9] = [
        ("gssss", IntegratorConfig::gssss(), "dt = 0.01"),
        ("tcg", IntegratorConfig::tcg(), "dt = 0.01"),
        ("tdg", IntegratorConfig::tdg(1.0), "dt = 0.01"),
        (
            "alpha-kappa",
            IntegratorConfig::alpha_kappa(1.0),
            "dt = 0.01",
        ),
        (
            "rk4",
            IntegratorConfig::rk4(),
            "dt = 0.01\nstabilization = \"pstab\"",
        ),
        (
            "heun",
            IntegratorConfig::heun(),
            "dt = 0.01\nstabilization = \"pstab\"",
        ),
        ("epm", IntegratorConfig::epm(), "dt = 0.01"),
        (
            "dopri5",
            IntegratorConfig::dopri5()
                .tolerances(1e-6, 1e-7)
                .max_step(2.0),
            "stabilization = \"pstab\"",
        ),
        ("bdf", IntegratorConfig::bdf().max_step(2.0), ""),
    ];
    for (m, built, extra) in cases {
        let text = oscillator(&format!("method = \"{m}\"\nt_end = 2.0\n{extra}"));
        let file = load_model_str(&text, "s.toml").unwrap();
        let resolved = file.integrator(&IntegratorSpec::default()).unwrap();
        let built = built.t_end(2.0);
        built.check().unwrap_or_else(|e| panic!("{m}: {e}"));
        assert_eq!(built.method_name(), m);
        assert_eq!(built, resolved, "{m}");
    }
}

/// From code: a builder call that does not apply to the method is not
/// ignored: `check` (and so `Stepper::new`) refuses it, naming the method
/// and the setting; none panics; the ones that apply pass.
#[test]
fn builders_refuse_the_wrong_method() {
    use flexmb::integrate::{
        ConstraintOption, Family, IntegratorConfig, SettingsError, SolveForm, Stabilization,
    };
    type Build = fn(IntegratorConfig) -> Result<IntegratorConfig, SettingsError>;
    // (setting, builder call): each builder call and the key it sets.
    let calls: [(&str, Build); 14] = [
        ("scheme", |c| Ok(c.midpoint())),
        ("scheme", |c| c.preset("newmark")),
        ("family", |c| c.family(Family::U0, [0.5; 3])),
        ("form", |c| Ok(c.form(SolveForm::V))),
        ("form", |c| Ok(c.two_field())),
        ("option", |c| Ok(c.option(ConstraintOption::One))),
        ("step_control", |c| Ok(c.cutback())),
        ("convergence", |c| Ok(c.increment_test(1e-8))),
        ("convergence", |c| Ok(c.rate_test(1e-8))),
        ("max_iter", |c| Ok(c.max_iter(10))),
        ("dt", |c| Ok(c.dt(0.01))),
        ("max_step", |c| Ok(c.max_step(0.1))),
        ("rtol", |c| Ok(c.tolerances(1e-6, 1e-7))),
        (
            "stabilization",
            |c| Ok(c.stabilization(Stabilization::None)),
        ),
    ];
    type New = fn() -> IntegratorConfig;
    let methods: [(&str, New); 9] = [
        ("gssss", IntegratorConfig::gssss),
        ("tcg", IntegratorConfig::tcg),
        ("tdg", || IntegratorConfig::tdg(0.5)),
        ("alpha-kappa", || IntegratorConfig::alpha_kappa(0.5)),
        ("dopri5", IntegratorConfig::dopri5),
        ("rk4", IntegratorConfig::rk4),
        ("heun", IntegratorConfig::heun),
        ("epm", IntegratorConfig::epm),
        ("bdf", IntegratorConfig::bdf),
    ];
    for (m, new) in methods {
        for (key, call) in calls {
            let got = call(new()).and_then(|c| c.t_end(1.0).check());
            if key == "step_control" && takes(m).contains(&"stabilization") | (m == "epm") {
                // A Runge–Kutta method's steps are adaptive or fixed.
                let e = got.expect_err(&format!("{m} must refuse cutback"));
                assert_eq!(e.field, key, "{m}: {e}");
                assert!(e.to_string().contains(&format!("method \"{m}\"")), "{e}");
            } else if takes(m).contains(&key) {
                got.unwrap_or_else(|e| panic!("{m}: {key}: {e}"));
            } else {
                let e = got.expect_err(&format!("{m} must refuse `{key}`"));
                assert_eq!(e.field, key, "{m}: {e}");
                assert!(
                    e.to_string()
                        .contains(&format!("method \"{m}\" has no setting `{key}`")),
                    "{m}: {e}"
                );
            }
        }
    }
}

/// docs/model-format.md's table of the keys each method takes is the
/// methods' own lists ([`flexmb::integrate::method_keys`]), both ways: every
/// method has a row, every documented method and key exists, and each row
/// names exactly the keys its methods take with any of their steps; every
/// key of the table is documented in a key table of the `[integrator]`
/// section.
#[test]
fn documented_keys_are_the_methods_keys() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/model-format.md");
    let text = std::fs::read_to_string(path).unwrap();
    let ticked =
        |s: &str| -> Vec<String> { s.split('`').skip(1).step_by(2).map(String::from).collect() };
    let section: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("## `[integrator]`"))
        .skip(1)
        .take_while(|l| !l.starts_with("## "))
        .collect();
    let rows: Vec<(Vec<String>, Vec<String>)> = section
        .iter()
        .skip_while(|l| !l.starts_with("| method | its keys |"))
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .map(|l| {
            let cells: Vec<&str> = l.split('|').collect();
            (ticked(cells[1]), ticked(cells[2]))
        })
        .collect();
    let library = flexmb::integrate::method_keys();
    let mut seen = vec![];
    for (methods, keys) in &rows {
        let mut keys: Vec<&str> = keys.iter().map(String::as_str).collect();
        keys.sort_unstable();
        keys.dedup();
        for m in methods {
            let (_, want) = library
                .iter()
                .find(|(name, _)| name == m)
                .unwrap_or_else(|| panic!("documented method \"{m}\" does not exist"));
            let mut want = want.clone();
            want.sort_unstable();
            assert_eq!(
                keys, want,
                "method \"{m}\": documented keys against its settings"
            );
            seen.push(m.as_str());
        }
    }
    for (m, _) in &library {
        assert!(
            seen.contains(m),
            "method \"{m}\" is not in the table of docs/model-format.md"
        );
    }
    // Every key has its row in a key table (`| `key` | ...`, or a row of
    // several keys), and every such row names keys.
    let documented: Vec<String> = section
        .iter()
        .filter(|l| l.starts_with("| `"))
        .flat_map(|l| ticked(l.split('|').nth(1).unwrap()))
        .collect();
    for key in IntegratorSpec::KEYS {
        assert!(
            documented.iter().any(|d| d == key),
            "`{key}` has no row in the [integrator] key tables"
        );
    }
    for row in section.iter().filter(|l| {
        l.starts_with("| `") && l.split('|').nth(3).is_some_and(|c| !c.trim().is_empty())
    }) {
        let keys = ticked(row.split('|').nth(1).unwrap());
        let in_a_key_table = row.split('|').nth(2).is_some_and(|t| {
            [
                "string",
                "float",
                "bool",
                "integer",
                "",
                "float array (2)",
                "float or string",
                "integer or string",
            ]
            .contains(&t.trim())
        });
        for key in keys.iter().filter(|_| in_a_key_table) {
            assert!(
                IntegratorSpec::KEYS.contains(&key.as_str()),
                "documented key `{key}` does not exist"
            );
        }
    }
}

/// A named choice given a name it does not take is refused with the field,
/// every name it takes and the one given, in the same words for every key
/// (the texts before the choices shared one check, `settings::choice`).
#[test]
fn named_choices_list_their_names() {
    let cases = [
        (
            "bdf",
            "newton = \"exact\"",
            "`newton` must be \"full\", \"cs\" or \"cm\", got \"exact\"",
        ),
        (
            "bdf",
            "error_test = \"v\"",
            "`error_test` must be \"qv\" or \"q\", got \"v\"",
        ),
        (
            "gssss",
            "jacobian = \"fd\"",
            "`jacobian` must be \"consistent\" or \"seed\", got \"fd\"",
        ),
        (
            "gssss",
            "convergence = \"fast\"",
            "`convergence` must be \"scaled\", \"increment\" or \"rate\", got \"fast\"",
        ),
        (
            "gssss",
            "refactor = \"never\"",
            "`refactor` must be \"iteration\" or \"step\", got \"never\"",
        ),
        (
            "tdg",
            "line_search = \"armijo\"",
            "`line_search` must be \"none\" or \"backtracking\", got \"armijo\"",
        ),
        (
            "dopri5",
            "projection = \"euclid\"",
            "`projection` must be \"mass\" or \"identity\", got \"euclid\"",
        ),
        (
            "dopri5",
            "stabilization = \"pstab\"\npstab_passes = \"three\"",
            "`pstab_passes` must be \"two\" or \"converged\", got \"three\"",
        ),
    ];
    let run = [
        (
            "bdf",
            "initialize = \"fix\"",
            "`initialize` must be \"check\" or \"project\", got \"fix\"",
        ),
        (
            "gssss",
            "factorization = \"qr\"",
            "`factorization` must be \"auto\", \"lu\" or \"ldlt\", got \"qr\"",
        ),
    ];
    for (method, extra, message) in cases.into_iter().chain(run) {
        let file = load_model_str(&oscillator(&table(method, extra)), "s.toml").expect("loads");
        let e = file
            .integrator(&IntegratorSpec::default())
            .expect_err(extra)
            .to_string();
        assert!(e.contains(message), "{method} {extra}: {e}");
    }
    // The names given explicitly resolve like the defaults.
    for (method, extra) in [
        ("bdf", "newton = \"cm\"\nerror_test = \"q\""),
        (
            "gssss",
            "jacobian = \"seed\"\nconvergence = \"rate\"\nrefactor = \"step\"",
        ),
        (
            "dopri5",
            "stabilization = \"pstab\"\nprojection = \"identity\"\npstab_passes = \"converged\"",
        ),
    ] {
        let file = load_model_str(&oscillator(&table(method, extra)), "s.toml").expect("loads");
        let label = file
            .integrator(&IntegratorSpec::default())
            .unwrap_or_else(|e| panic!("{method} {extra}: {e}"))
            .label();
        assert!(!label.is_empty());
    }
}
