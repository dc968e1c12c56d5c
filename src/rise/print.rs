//! Pretty-printer for named Rise. `parse(print(e)) == e` for every expression
//! (the property test in `tests/suite/rise_frontend.rs` checks it).

use super::nat::{default_atom_name, Nat};
use super::syntax::{Expr, ExprKind};
use super::types::Type;

#[derive(Clone, Copy, PartialEq)]
enum Ctx {
    /// Anywhere an `expr` may stand.
    Top,
    /// The function of an application: lambdas and lets need parentheses.
    Fun,
    /// An argument: applications need parentheses too.
    Arg,
}

fn show_nat(n: &Nat) -> String {
    n.show(&default_atom_name)
}

pub(crate) fn show_f32(x: f32) -> String {
    // Display never uses an exponent and round-trips; make sure a dot is present.
    let s = format!("{x}");
    if s.contains('.') {
        s
    } else {
        format!("{s}.0")
    }
}

/// Prints an expression.
pub fn print_expr(e: &Expr) -> String {
    let mut out = String::new();
    write_expr(e, Ctx::Top, &mut out, &mut vec![]);
    out
}

/// Prints an expression, with the place of every subexpression that has a type (those
/// printed from a typed term, [`super::debruijn::to_named_as`]): `(start, end, type)`, in
/// characters, innermost last among those that start at the same place.
pub fn print_with_types(e: &Expr) -> (String, Vec<(usize, usize, String)>) {
    let (mut out, mut spans) = (String::new(), vec![]);
    write_expr(e, Ctx::Top, &mut out, &mut spans);
    let chars = |byte: usize| out[..byte].chars().count();
    let mut typed: Vec<(usize, usize, String)> = (spans.iter())
        .map(|(start, end, t)| (chars(*start), chars(*end), print_type(t)))
        .collect();
    typed.sort_by_key(|(start, end, _)| (*start, std::cmp::Reverse(*end)));
    (out, typed)
}

/// Where each typed subexpression was printed, in bytes.
type Spans<'e> = Vec<(usize, usize, &'e Type)>;

/// Prints a type (free nat variables by name).
pub fn print_type(t: &Type) -> String {
    t.show(&[])
}

fn let_sugar(e: &Expr) -> Option<(&Expr, &str, &Expr)> {
    let ExprKind::App(f, lam) = &e.kind else {
        return None;
    };
    let ExprKind::App(l, value) = &f.kind else {
        return None;
    };
    match (&l.kind, &lam.kind) {
        (ExprKind::Var(name), ExprKind::Lam(x, None, body)) if name == "let" => {
            Some((value, x, body))
        }
        _ => None,
    }
}

fn write_expr<'e>(e: &'e Expr, ctx: Ctx, out: &mut String, spans: &mut Spans<'e>) {
    let start = out.len();
    write_kind(e, ctx, out, spans);
    if let Some(t) = &e.ty {
        spans.push((start, out.len(), t));
    }
}

fn write_kind<'e>(e: &'e Expr, ctx: Ctx, out: &mut String, spans: &mut Spans<'e>) {
    let paren = |open: bool, out: &mut String| {
        if open {
            out.push('(')
        }
    };
    if let Some((value, x, body)) = let_sugar(e) {
        paren(ctx != Ctx::Top, out);
        out.push_str(&format!("let {x} = "));
        write_expr(value, Ctx::Top, out, spans);
        out.push_str(" in ");
        write_expr(body, Ctx::Top, out, spans);
        if ctx != Ctx::Top {
            out.push(')');
        }
        return;
    }
    match &e.kind {
        ExprKind::Var(x) => out.push_str(x),
        ExprKind::Int(i) => out.push_str(&i.to_string()),
        ExprKind::F32(x) => out.push_str(&show_f32(x.0)),
        ExprKind::Annot(inner, t) => {
            out.push('(');
            write_expr(inner, Ctx::Top, out, spans);
            out.push_str(&format!(" : {})", print_type(t)));
        }
        ExprKind::Lam(..) => {
            paren(ctx != Ctx::Top, out);
            out.push_str("fun");
            let mut cur = e;
            while let ExprKind::Lam(x, t, body) = &cur.kind {
                match t {
                    Some(t) => out.push_str(&format!(" ({x} : {})", print_type(t))),
                    None => out.push_str(&format!(" {x}")),
                }
                cur = body;
            }
            out.push_str(" => ");
            write_expr(cur, Ctx::Top, out, spans);
            if ctx != Ctx::Top {
                out.push(')');
            }
        }
        ExprKind::NatLam(..) | ExprKind::DataLam(..) => {
            paren(ctx != Ctx::Top, out);
            let data = matches!(e.kind, ExprKind::DataLam(..));
            out.push_str(if data { "dfun" } else { "nfun" });
            let mut cur = e;
            loop {
                match &cur.kind {
                    ExprKind::NatLam(n, body) if !data => {
                        out.push_str(&format!(" {n}"));
                        cur = body;
                    }
                    ExprKind::DataLam(a, body) if data => {
                        out.push_str(&format!(" {a}"));
                        cur = body;
                    }
                    _ => break,
                }
            }
            out.push_str(" => ");
            write_expr(cur, Ctx::Top, out, spans);
            if ctx != Ctx::Top {
                out.push(')');
            }
        }
        ExprKind::NatApp(..) => {
            let mut nats = vec![];
            let mut cur = e;
            while let ExprKind::NatApp(f, n) = &cur.kind {
                nats.push(show_nat(n));
                cur = f;
            }
            nats.reverse();
            // The function of a nat application must be an atom.
            let atomic = matches!(
                cur.kind,
                ExprKind::Var(_) | ExprKind::Int(_) | ExprKind::F32(_) | ExprKind::Annot(..)
            ) && !matches!(&cur.kind, ExprKind::Int(i) if *i < 0)
                && !matches!(&cur.kind, ExprKind::F32(x) if x.0.is_sign_negative());
            paren(!atomic, out);
            write_expr(cur, Ctx::Top, out, spans);
            if !atomic {
                out.push(')');
            }
            out.push_str(&format!("<{}>", nats.join(", ")));
        }
        ExprKind::Comp(f, g) => {
            // A chain `f >> g >> h` is nested to the left; a composition on the right
            // needs parentheses.
            paren(ctx != Ctx::Top, out);
            match f.kind {
                ExprKind::Comp(..) => write_expr(f, Ctx::Top, out, spans),
                _ => write_expr(f, Ctx::Fun, out, spans),
            }
            out.push_str(" >> ");
            write_expr(g, Ctx::Fun, out, spans);
            if ctx != Ctx::Top {
                out.push(')');
            }
        }
        ExprKind::App(f, x) => {
            paren(ctx == Ctx::Arg, out);
            write_expr(f, Ctx::Fun, out, spans);
            out.push(' ');
            write_expr(x, Ctx::Arg, out, spans);
            if ctx == Ctx::Arg {
                out.push(')');
            }
        }
    }
}

/// Prints an expression on lines of at most `width` characters where it can (an atom longer
/// than that keeps its line), each indented by `indent` spaces and more inside: the body of a
/// `fun` or `nfun` below its binders, each argument of a long application on a line of its
/// own below the function, the stages of a composition one a line. Whitespace aside, the
/// text is [`print_expr`]'s, and it parses back to the same expression.
pub fn print_wrapped(e: &Expr, width: usize, indent: usize) -> String {
    let mut out = " ".repeat(indent);
    lay_out(&print_expr(e), width, indent, &mut out);
    out
}

/// Lays out `text` (printed Rise) starting at column `at`, continuing lines at `at` and more.
fn lay_out(text: &str, width: usize, at: usize, out: &mut String) {
    let text = text.trim();
    if at + text.chars().count() <= width {
        out.push_str(text);
        return;
    }
    let line = |out: &mut String, at: usize| {
        out.push('\n');
        out.push_str(&" ".repeat(at));
    };
    let parts = top_level(text);
    if parts.len() == 1 {
        // One group: `(...)` laid out inside its parentheses, or an atom as it is.
        if let Some(inner) = text.strip_prefix('(').and_then(|t| t.strip_suffix(')')) {
            out.push('(');
            lay_out(inner, width, at + 1, out);
            out.push(')');
        } else {
            out.push_str(text);
        }
        return;
    }
    if let Some(colon) = parts.iter().position(|p| *p == ":") {
        // `e : t` (inside an annotation's parentheses): the type after the expression.
        lay_out(&parts[..colon].join(" "), width, at, out);
        out.push_str(" : ");
        out.push_str(&parts[colon + 1..].join(" "));
    } else if let Some(arrow) = parts.iter().position(|p| *p == "=>") {
        // `fun x y =>` (or `nfun`, `dfun`) on this line, the body below.
        out.push_str(&parts[..=arrow].join(" "));
        line(out, at + 2);
        lay_out(&parts[arrow + 1..].join(" "), width, at + 2, out);
    } else if parts.contains(&">>") {
        // `f >> g >> h`: one stage a line.
        for (i, stage) in parts.split(|p| *p == ">>").enumerate() {
            if i > 0 {
                line(out, at);
                out.push_str(">> ");
            }
            lay_out(&stage.join(" "), width, at + 3 * usize::from(i > 0), out);
        }
    } else if parts[0] == "let" {
        // `let x = v in b`: the binding, then the body at the same indentation.
        let mut depth = 0;
        let split = parts.iter().position(|p| {
            depth += i32::from(*p == "let") - i32::from(*p == "in");
            depth == 0
        });
        let Some(split) = split.filter(|s| *s > 3) else {
            out.push_str(text);
            return;
        };
        let head = format!("{} {} = ", parts[0], parts[1]);
        out.push_str(&head);
        lay_out(&parts[3..split].join(" "), width, at + head.len(), out);
        out.push_str(" in");
        line(out, at);
        lay_out(&parts[split + 1..].join(" "), width, at, out);
    } else {
        // An application: the function, then each argument on a line of its own.
        lay_out(parts[0], width, at, out);
        for arg in &parts[1..] {
            line(out, at + 2);
            lay_out(arg, width, at + 2, out);
        }
    }
}

/// `text` split at its spaces outside parentheses and a size application's angle brackets.
fn top_level(text: &str) -> Vec<&str> {
    let (mut parts, mut parens, mut angles, mut start) = (vec![], 0, 0, 0);
    for (i, c) in text.char_indices() {
        match c {
            '(' => parens += 1,
            ')' => parens -= 1,
            // Sizes hold no `>`: a `>` in them closes them (elsewhere it is in `->`, `=>`, `>>`).
            '<' => angles += 1,
            '>' if angles > 0 => angles -= 1,
            ' ' if parens == 0 && angles == 0 => {
                if start < i {
                    parts.push(&text[start..i]);
                }
                start = i + 1;
            }
            _ => {}
        }
    }
    if start < text.len() {
        parts.push(&text[start..]);
    }
    parts
}
